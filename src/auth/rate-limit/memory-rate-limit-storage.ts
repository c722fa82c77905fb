// Hand-written: @nestjs/throttler's ThrottlerStorageService keeps one timestamp per hit and filters them all on every hit, a cost that grows with the budget (docs/performance.md, "The servers compared").
import type { ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import { IntervalThrottle } from '../../common/interval-throttle.js';

export type RateLimitRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

type Window = { hits: number; endsAt: number; blockedUntil: number };

/** Finished windows are dropped this often, so addresses seen once do not stay until pushed out. */
const PURGE_EVERY_MS = 10_000;
/** Counters per process (per key and per address together): beyond it the least recently counted go. */
const MAX_RATE_LIMIT_COUNTERS = 100_000;
export function rateLimitRecord(totalHits: number, leftMs: number, isBlocked: boolean): Promise<RateLimitRecord> {
  const seconds = Math.ceil(leftMs / 1000);
  return Promise.resolve({ totalHits, timeToExpire: seconds, isBlocked, timeToBlockExpire: isBlocked ? seconds : 0 });
}

/** Fixed windows with the Redis storage's semantics: constant work per hit whatever the budget. */
export class MemoryRateLimitStorage implements ThrottlerStorage {
  private readonly windows: LRUCache<string, Window>;
  private readonly purges: IntervalThrottle<'purge'>;

  constructor(
    private readonly now: () => number = Date.now,
    maxCounters = MAX_RATE_LIMIT_COUNTERS,
  ) {
    // Each window lives in the cache until it (or its block) ends, on the same clock as the counting.
    this.windows = new LRUCache({ max: maxCounters, ttlResolution: 0, perf: { now } });
    this.purges = new IntervalThrottle({ intervalMs: PURGE_EVERY_MS, maxKeys: 1, now });
  }

  increment(key: string, ttl: number, limit: number, blockDuration: number, name: string): Promise<RateLimitRecord> {
    const now = this.now();
    if (this.purges.admit('purge')) this.windows.purgeStale();
    const id = `${name}:${key}`;
    let window = this.windows.get(id);
    if (window && window.blockedUntil > now) return rateLimitRecord(limit + 1, window.blockedUntil - now, true);
    if (!window || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + ttl, blockedUntil: 0 };
      this.windows.set(id, window, { ttl });
    }
    window.hits += 1;
    if (window.hits <= limit) return rateLimitRecord(window.hits, window.endsAt - now, false);
    if (blockDuration > 0) {
      const hits = window.hits;
      // A fresh window starts once the block is over.
      window.blockedUntil = window.endsAt = now + blockDuration;
      window.hits = 0;
      this.windows.set(id, window, { ttl: blockDuration });
      return rateLimitRecord(hits, blockDuration, true);
    }
    return rateLimitRecord(window.hits, window.endsAt - now, true);
  }
}
