// Hand-written: @nestjs/throttler's ThrottlerStorageService keeps one timestamp per hit and filters them all on every hit, a cost that grows with the budget (docs/performance.md, "The servers compared").
import type { ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';

type RateLimitRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

interface Window {
  hits: number;
  endsAt: number;
  blockedUntil: number;
}

const SWEEP_EVERY_MS = 10_000;
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
  private nextSweep = 0;

  constructor(
    private readonly now: () => number = Date.now,
    maxCounters = MAX_RATE_LIMIT_COUNTERS,
  ) {
    this.windows = new LRUCache({ max: maxCounters });
  }

  get size(): number {
    return this.windows.size;
  }

  increment(key: string, ttl: number, limit: number, blockDuration: number, name: string): Promise<RateLimitRecord> {
    const now = this.now();
    this.sweep(now);
    const id = `${name}:${key}`;
    let window = this.windows.get(id);
    if (window && window.blockedUntil > now) {
      const left = seconds(window.blockedUntil - now);
      return Promise.resolve({ totalHits: limit + 1, timeToExpire: left, isBlocked: true, timeToBlockExpire: left });
    }
    if (!window || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + ttl, blockedUntil: 0 };
      this.windows.set(id, window);
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

  /** Drops finished windows now and then, so addresses seen once do not stay in memory until pushed out. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + SWEEP_EVERY_MS;
    const finished: string[] = [];
    this.windows.forEach((window, id) => {
      if (window.endsAt <= now && window.blockedUntil <= now) finished.push(id);
    });
    for (const id of finished) this.windows.delete(id);
  }
}
