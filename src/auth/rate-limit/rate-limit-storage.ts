import type { ThrottlerStorage } from '@nestjs/throttler';

/** What `increment` answers; times are in whole seconds, rounded up. */
export type RateLimitRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * Where rate-limit counters live, behind @nestjs/throttler's storage contract
 * (`increment(key, ttl ms, limit, blockDuration ms, throttlerName)`). Both
 * implementations count in fixed windows: the hit over `limit` is refused
 * until the window ends, or, with a `blockDuration`, until the block ends.
 *
 * Only the contract is taken from @nestjs/throttler: its runtime is CommonJS
 * requiring the ESM-only @nestjs/common 12, which Node 20 allows but Jest's
 * module loader refuses (it needs Node 24.9+ for require(esm)), so its guard
 * and in-memory storage cannot be loaded by the tests that boot the app.
 */
export abstract class RateLimitStorage implements ThrottlerStorage {
  abstract increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<RateLimitRecord>;
}
