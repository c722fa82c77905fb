import { Module } from '@nestjs/common';
import { ThrottlerModule, type ThrottlerModuleOptions, type ThrottlerStorage } from '@nestjs/throttler';
import { type AppConfig, RATE_LIMIT_WINDOW_MS } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { MemoryRateLimitStorage } from './memory-rate-limit-storage.js';
import { RateLimitStorageGauge } from './rate-limit-storage-gauge.js';

const REDIS_STORAGE = Symbol('redis-rate-limit-storage');

/** A provider of its own, so that Nest connects and closes it with the application. */
@Module({
  providers: [
    {
      provide: REDIS_STORAGE,
      inject: [APP_CONFIG, { token: RateLimitStorageGauge, optional: true }],
      // Loaded only when used, so that instances without Redis do not load ioredis at start-up.
      useFactory: async (config: AppConfig, gauge?: RateLimitStorageGauge) => {
        if (config.redisUrl) {
          return new (await import('./redis-rate-limit-storage.js')).RedisRateLimitStorage(config.redisUrl, gauge);
        }
        gauge?.storageInUse('memory');
        return null;
      },
    },
  ],
  exports: [REDIS_STORAGE],
})
class RedisStorageModule {}

/** @nestjs/throttler with the per-key budget (RATE_LIMIT_PER_MINUTE, 0: off), in Redis when REDIS_URL is set. */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      imports: [RedisStorageModule],
      inject: [APP_CONFIG, REDIS_STORAGE],
      useFactory: (config: AppConfig, redis: ThrottlerStorage | null): ThrottlerModuleOptions => ({
        throttlers: [
          { name: 'default', ttl: RATE_LIMIT_WINDOW_MS, limit: config.rateLimitPerMinute, blockDuration: 0 },
        ],
        skipIf: () => config.rateLimitPerMinute === 0,
        // One budget per key, whichever route it calls (throttler's default key is per route).
        generateKey: (_context, tracker) => tracker,
        storage: redis ?? new MemoryRateLimitStorage(),
      }),
    }),
  ],
  providers: [AuthFailureLimiter],
  exports: [AuthFailureLimiter],
})
export class RateLimitModule {}
