import { LRUCache } from 'lru-cache';

type IntervalThrottleOptions = { intervalMs: number; maxKeys: number; now?: () => number };

/** "At most once per interval per key", at most `maxKeys` at once (the oldest dropped); `now` in whole ms. */
export class IntervalThrottle<K extends NonNullable<unknown>> {
  private readonly held: LRUCache<K, true>;

  constructor({ intervalMs, maxKeys, now = () => Date.now() }: IntervalThrottleOptions) {
    this.held = new LRUCache<K, true>({
      max: maxKeys,
      // Stale once its age is past the ttl: on a whole-millisecond clock, again exactly `intervalMs` after admission.
      ttl: intervalMs - 1,
      ttlResolution: 0,
      perf: { now },
    });
  }

  admit(key: K): boolean {
    if (this.held.has(key)) return false;
    this.held.set(key, true);
    return true;
  }
}
