// Hand-written: @nestjs/throttler's ThrottlerStorageService keeps one timestamp per hit and filters them all on every hit, a cost that grows with the budget (docs/performance.md, "The servers compared").
import type { ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import { IntervalThrottle } from '../../common/interval-throttle.js';

type RateLimitRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

interface Window {
  hits: number;
  endsAt: number;
  blockedUntil: number;
}

/** Finished windows are dropped this often, so addresses seen once do not stay in memory until pushed out. */
const PURGE_EVERY_MS = 10_000;
/**
 * The most counters one process holds (per-key and per-address together): clients rotating
 * through addresses push out the least recently counted ones instead of growing the heap without bound.
 */
export const MAX_RATE_LIMIT_COUNTERS = 100_000;
const seconds = (ms: number) => Math.ceil(ms / 1000);

/**
 * Counters in this process: right for a single instance, and what RedisRateLimitStorage falls back to while
 * Redis is unreachable; the same semantics as the Redis one. Fixed windows, one counter per key: constant work
 * per hit whatever the budget.
 */
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

  get size(): number {
    return this.windows.size;
  }

  increment(key: string, ttl: number, limit: number, blockDuration: number, name: string): Promise<RateLimitRecord> {
    const now = this.now();
    if (this.purges.admit('purge')) this.windows.purgeStale();
    const id = `${name}:${key}`;
    let window = this.windows.get(id);
    if (window && window.blockedUntil > now) {
      const left = seconds(window.blockedUntil - now);
      return Promise.resolve({ totalHits: limit + 1, timeToExpire: left, isBlocked: true, timeToBlockExpire: left });
    }
    if (!window || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + ttl, blockedUntil: 0 };
      this.windows.set(id, window, { ttl });
    }
    window.hits += 1;
    const windowLeft = seconds(window.endsAt - now);
    if (window.hits <= limit) {
      return Promise.resolve({
        totalHits: window.hits,
        timeToExpire: windowLeft,
        isBlocked: false,
        timeToBlockExpire: 0,
      });
    }
    if (blockDuration > 0) {
      const hits = window.hits;
      // A fresh window starts once the block is over.
      window.blockedUntil = window.endsAt = now + blockDuration;
      window.hits = 0;
      this.windows.set(id, window, { ttl: blockDuration });
      const left = seconds(blockDuration);
      return Promise.resolve({ totalHits: hits, timeToExpire: left, isBlocked: true, timeToBlockExpire: left });
    }
    return Promise.resolve({
      totalHits: window.hits,
      timeToExpire: windowLeft,
      isBlocked: true,
      timeToBlockExpire: windowLeft,
    });
  }
}
