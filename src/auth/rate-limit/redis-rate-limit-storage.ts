// Hand-written: the maintained Redis storage (@nest-lab/throttler-storage-redis 1.2.0) declares peer @nestjs/common <= 11, not 12; this one also lets requests through while Redis is down.
import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { ThrottlerStorage } from '@nestjs/throttler';

type RateLimitRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * One atomic step of a fixed window: while the block marker lives, count
 * nothing and report it; otherwise INCR the window's counter (PEXPIRE on its
 * first hit) and, once over the limit, set the block marker (dropping the
 * counter, so a new window starts when the block ends).
 * Returns { hits, window ms left, blocked 0|1, block ms left }.
 */
const INCREMENT_SCRIPT = `
local blockLeft = redis.call('PTTL', KEYS[2])
if blockLeft > 0 then
  return {tonumber(ARGV[2]) + 1, blockLeft, 1, blockLeft}
end
local hits = redis.call('INCR', KEYS[1])
local windowLeft = redis.call('PTTL', KEYS[1])
if windowLeft < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  windowLeft = tonumber(ARGV[1])
end
if hits <= tonumber(ARGV[2]) then
  return {hits, windowLeft, 0, 0}
end
local block = tonumber(ARGV[3])
if block > 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[2], '1', 'PX', block)
  return {hits, block, 1, block}
end
return {hits, windowLeft, 1, windowLeft}
`;

type IncrementReply = [hits: number, windowLeftMs: number, blocked: 0 | 1, blockLeftMs: number];

interface ThrottleCommands {
  throttleIncrement(
    hits: string,
    block: string,
    ttl: number,
    limit: number,
    blockDuration: number,
  ): Promise<IncrementReply>;
}

const REPORT_FAILURE_EVERY_MS = 10_000;

/**
 * Rate-limit counters in Redis, so every instance behind a load balancer
 * shares one budget per key. If Redis is unreachable, requests are let
 * through (and a warning logged every few seconds) rather than refused.
 */
export class RedisRateLimitStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RedisRateLimitStorage');
  private readonly redis: Redis & ThrottleCommands;
  private lastFailureReport = 0;

  constructor(url: string) {
    // No offline queue: while Redis is away a command fails at once instead of holding the request.
    this.redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 }) as Redis &
      ThrottleCommands;
    this.redis.defineCommand('throttleIncrement', { numberOfKeys: 2, lua: INCREMENT_SCRIPT });
    this.redis.on('error', (error: Error) => this.reportFailure(error));
  }

  async onModuleInit(): Promise<void> {
    await this.redis.connect().catch((error: Error) => this.reportFailure(error));
  }

  onApplicationShutdown(): void {
    // Every increment is awaited by its request, so nothing is left to flush: close without QUIT's round trip.
    this.redis.disconnect();
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    name: string,
  ): Promise<RateLimitRecord> {
    // The hash tag keeps both keys in one slot of a Redis Cluster.
    const base = `throttle:${name}:{${key}}`;
    try {
      const [totalHits, windowLeft, blocked, blockLeft] = await this.redis.throttleIncrement(
        `${base}:hits`,
        `${base}:blocked`,
        ttl,
        limit,
        blockDuration,
      );
      return {
        totalHits,
        timeToExpire: Math.ceil(windowLeft / 1000),
        isBlocked: blocked === 1,
        timeToBlockExpire: Math.ceil(blockLeft / 1000),
      };
    } catch (error) {
      this.reportFailure(error as Error);
      return { totalHits: 0, timeToExpire: Math.ceil(ttl / 1000), isBlocked: false, timeToBlockExpire: 0 };
    }
  }

  private reportFailure(error: Error): void {
    const now = Date.now();
    if (now - this.lastFailureReport < REPORT_FAILURE_EVERY_MS) return;
    this.lastFailureReport = now;
    this.logger.warn(`Redis unavailable, rate limits are not enforced: ${error.message}`);
  }
}
