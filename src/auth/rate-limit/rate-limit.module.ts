import { Module } from '@nestjs/common';
import { ThrottlerModule, type ThrottlerModuleOptions } from '@nestjs/throttler';
import { Registry } from 'prom-client';
import { type AppConfig, RATE_LIMIT_WINDOW_MS } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { MemoryRateLimitStorage } from './memory-rate-limit-storage.js';
import { rateLimitStorageGauge } from './rate-limit-storage-gauge.js';

// The per-key budget (RATE_LIMIT_PER_MINUTE, 0: off), in Redis when REDIS_URL is set; throttler provides the storage
// under its own token, so Nest connects and closes the Redis one with the application.
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      // The registry is the metrics module's (absent where a test loads this module alone).
      inject: [APP_CONFIG, { token: Registry, optional: true }],
      useFactory: async (config: AppConfig, registry?: Registry): Promise<ThrottlerModuleOptions> => {
        const gauge = registry && rateLimitStorageGauge(registry);
        if (!config.redisUrl) gauge?.storageInUse('memory');
        return {
          throttlers: [
            { name: 'default', ttl: RATE_LIMIT_WINDOW_MS, limit: config.rateLimitPerMinute, blockDuration: 0 },
          ],
          skipIf: () => config.rateLimitPerMinute === 0,
          // One budget per key, whichever route it calls (throttler's default key is per route).
          generateKey: (_context, tracker) => tracker,
          // Loaded only when used, so that instances without Redis do not load ioredis at start-up.
          storage: config.redisUrl
            ? new (await import('./redis-rate-limit-storage.js')).RedisRateLimitStorage(config.redisUrl, gauge)
            : new MemoryRateLimitStorage(),
        };
      },
    }),
  ],
  providers: [AuthFailureLimiter],
  exports: [AuthFailureLimiter],
})
export class RateLimitModule {}
