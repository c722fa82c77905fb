import { LRUCache } from 'lru-cache';

export interface IntervalThrottleOptions<K, V> {
  /** A key admitted is refused until this many milliseconds have passed. */
  intervalMs: number;
  /** Keys held at once; past it, the key admitted longest ago is dropped (and may be admitted again early). */
  maxKeys: number;
  /** The clock, in whole milliseconds; `Date.now` (looked up on each call, so a test may replace it). */
  now?: () => number;
  /**
   * Called when a key's interval ends (or at `endAll`) with what was admitted with it, e.g. to write what was held
   * back. Given one, lru-cache purges each key on a timer at the end of its interval, so that this runs on time.
   * What it returns, if anything, holds the key for one more interval (not after `endAll`).
   */
  onIntervalEnd?: (key: K, value: V) => V | undefined;
}

/**
 * "At most once per interval per key", on lru-cache: a key is held for `intervalMs` from the moment it is admitted
 * (its `ttl`), `maxKeys` bound the memory, and a stale key is never reported as held (`allowStale: false`).
 * The hot path is one `has`, plus one `set` when the key is admitted.
 */
export class IntervalThrottle<K extends NonNullable<unknown>, V extends NonNullable<unknown> = true> {
  private readonly held: LRUCache<K, V>;

  constructor({ intervalMs, maxKeys, now = () => Date.now(), onIntervalEnd }: IntervalThrottleOptions<K, V>) {
    this.held = new LRUCache<K, V>({
      max: maxKeys,
      // lru-cache counts an entry stale only once its age is past the ttl: on a whole-millisecond clock, a ttl one
      // below the interval admits a key again exactly `intervalMs` after it was admitted.
      ttl: intervalMs - 1,
      // No cached clock reading: each check reads the clock (a timer per reading would cost more than the reading).
      ttlResolution: 0,
      allowStale: false,
      perf: { now },
      ...(onIntervalEnd && {
        ttlAutopurge: true,
        disposeAfter: (value: V, key: K, reason: LRUCache.DisposeReason) => {
          // 'set': a stale key admitted again before its purge timer ran; 'evict' is not the end of an interval.
          if (reason !== 'expire' && reason !== 'set' && reason !== 'delete') return;
          const next = onIntervalEnd(key, value);
          // Admitted once lru-cache's purge timer has returned: a key set again from within it would leave that
          // timer untracked, and, once cleared, firing every millisecond.
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
