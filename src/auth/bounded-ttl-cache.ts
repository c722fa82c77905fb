interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * A small map whose entries expire after `ttlMs` and which never holds more
 * than `maxEntries`: when full, the least recently used entry goes (a Map
 * iterates in insertion order, and a hit re-inserts its entry at the end).
 */
export class BoundedTtlCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value as K);
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
  }
}
