// Hand-written: the maintained Redis storage (@nest-lab/throttler-storage-redis 1.2.0) declares peer @nestjs/common <= 11, not 12; this one also keeps counting in memory while Redis is down.
import { Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { IntervalThrottle } from '../../common/interval-throttle.js';
import { MemoryRateLimitStorage, type RateLimitRecord, rateLimitRecord } from './memory-rate-limit-storage.js';
import type { RateLimitStorageGauge, RateLimitStorageKind } from './rate-limit-storage-gauge.js';

/** One atomic step of a fixed window; returns { hits, window ms left, blocked 0|1 }. */
const INCREMENT_SCRIPT = `
local blockLeft = redis.call('PTTL', KEYS[2])
if blockLeft > 0 then return {tonumber(ARGV[2]) + 1, blockLeft, 1} end
local hits = redis.call('INCR', KEYS[1])
local windowLeft = redis.call('PTTL', KEYS[1])
if windowLeft < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  windowLeft = tonumber(ARGV[1])
end
if hits <= tonumber(ARGV[2]) then return {hits, windowLeft, 0} end
local block = tonumber(ARGV[3])
if block > 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[2], '1', 'PX', block)
  return {hits, block, 1}
end
return {hits, windowLeft, 1}
`;

interface ThrottleCommands {
  throttleIncrement(hits: string, block: string, ttl: number, limit: number, blockMs: number): Promise<number[]>;
}

const REPORT_FAILURE_EVERY_MS = 10_000;
// Counters in Redis, one budget per key across the fleet; while Redis is unreachable, in this process's memory (one
// warning per outage, never two within REPORT_FAILURE_EVERY_MS) until ioredis reconnects by itself.
export class RedisRateLimitStorage implements ThrottlerStorage, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RedisRateLimitStorage');
  private readonly redis: Redis & ThrottleCommands;
  private readonly memory = new MemoryRateLimitStorage();
  private inUse: RateLimitStorageKind = 'memory';
  private outageReported = false;
  private readonly warnings = new IntervalThrottle<'redis'>({ intervalMs: REPORT_FAILURE_EVERY_MS, maxKeys: 1 });
  private closing = false;

  constructor(
    url: string,
    private readonly gauge?: RateLimitStorageGauge,
  ) {
    // No offline queue: while Redis is away a command fails at once instead of holding the request.
    this.redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 500,
      connectTimeout: 2_000,
    }) as Redis & ThrottleCommands;
    this.redis.defineCommand('throttleIncrement', { numberOfKeys: 2, lua: INCREMENT_SCRIPT });
    this.redis.on('ready', () => this.use('redis'));
    this.redis.on('close', () => this.use('memory'));
    this.redis.on('error', (error: Error) => this.reportOutage(error));
    this.gauge?.storageInUse('memory');
  }

  get storage(): RateLimitStorageKind {
    return this.inUse;
  }

  onModuleInit(): Promise<void> {
    return this.redis.connect().catch((error: Error) => this.reportOutage(error));
  }

  onApplicationShutdown(): void {
    this.closing = true;
    // Every increment is awaited by its request, so nothing is left to flush: close without QUIT's round trip.
    this.redis.disconnect();
  }

  async increment(key: string, ttl: number, limit: number, blockMs: number, name: string): Promise<RateLimitRecord> {
    if (this.inUse === 'memory') return this.memory.increment(key, ttl, limit, blockMs, name);
    // The hash tag keeps both keys in one slot of a Redis Cluster.
    const base = `throttle:${name}:{${key}}`;
    try {
      const reply = await this.redis.throttleIncrement(`${base}:hits`, `${base}:blocked`, ttl, limit, blockMs);
      // While blocked, the block's time left is the window's too.
      return rateLimitRecord(reply[0], reply[1], reply[2] === 1);
    } catch (error) {
      // Connected, but this command failed (a timeout): this hit is counted in memory.
      if (this.mayWarn()) this.logger.warn(`A Redis command failed (${(error as Error).message}): counted in memory`);
      return this.memory.increment(key, ttl, limit, blockMs, name);
    }
  }

  private use(storage: RateLimitStorageKind): void {
    if (this.closing || storage === this.inUse) return;
    this.inUse = storage;
    this.gauge?.storageInUse(storage);
    if (storage === 'redis' && this.outageReported) {
      this.outageReported = false;
      this.logger.log('Redis is reachable again: rate limits are counted in Redis, shared by every instance');
    }
  }

  /** ioredis reports every failed reconnection attempt: once per outage. */
  private reportOutage(error: Error): void {
    if (this.outageReported || !this.mayWarn()) return;
    this.outageReported = true;
    this.logger.warn(
      `Redis is unreachable (${error.message}): rate limits are counted in this instance's memory until it returns`,
    );
  }

  private mayWarn(): boolean {
    return !this.closing && this.warnings.admit('redis');
  }
}
