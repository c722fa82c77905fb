import { LRUCache } from 'lru-cache';

interface IntervalThrottleOptions<K, V> {
  intervalMs: number;
  maxKeys: number;
  now?: () => number;
  onIntervalEnd?: (key: K, value: V) => V | undefined;
}

/**
 * "At most once per interval per key", on lru-cache: a key admitted is held for `intervalMs` (its ttl), at most
 * `maxKeys` at once (past it, the key admitted longest ago is dropped). `now`: the clock in whole milliseconds.
 * `onIntervalEnd` runs when a key's interval ends (or at `endAll`) with its value, on lru-cache's purge timer;
 * what it returns holds the key for one more interval (not after `endAll`).
 */
export class IntervalThrottle<K extends NonNullable<unknown>, V extends NonNullable<unknown> = true> {
  private readonly held: LRUCache<K, V>;

  constructor({ intervalMs, maxKeys, now = () => Date.now(), onIntervalEnd }: IntervalThrottleOptions<K, V>) {
    this.held = new LRUCache<K, V>({
      max: maxKeys,
      // An entry is stale once its age is past the ttl: on a whole-millisecond clock, this ttl admits a key again
      // exactly `intervalMs` after it was admitted.
      ttl: intervalMs - 1,
      ttlResolution: 0,
      allowStale: false,
      perf: { now },
      ...(onIntervalEnd && {
        ttlAutopurge: true,
        disposeAfter: (value: V, key: K, reason: LRUCache.DisposeReason) => {
          // 'set': a stale key admitted again before its purge timer ran; 'evict' is not the end of an interval.
          if (reason !== 'expire' && reason !== 'set' && reason !== 'delete') return;
          const next = onIntervalEnd(key, value);
          // Set from within lru-cache's purge timer, a key's own timer would be left untracked, firing every ms.
          if (next !== undefined && reason === 'expire') queueMicrotask(() => this.admit(key, next));
        },
      }),
    });
  }

  /** True when `key` is not held: the caller acts now, and the key is held, with `value`, for one interval. */
  admit(key: K, value: V = true as V): boolean {
    if (this.held.has(key)) return false;
    this.held.set(key, value);
    return true;
  }

  /** What `key` was admitted with, while its interval lasts. */
  get(key: K): V | undefined {
    return this.held.peek(key);
  }

  /** Ends every key's interval now (`onIntervalEnd` runs for each), e.g. at shutdown. */
  endAll(): void {
    this.held.clear();
  }
}
