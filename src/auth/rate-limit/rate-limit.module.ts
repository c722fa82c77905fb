import { Module } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { ApiKeyRateLimiter } from './api-key-rate-limiter.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { MemoryRateLimitStorage } from './memory-rate-limit-storage.js';
import { RateLimitStorage } from './rate-limit-storage.js';

/** Counters in Redis when REDIS_URL is set (one budget shared by all instances), in this process otherwise. */
@Module({
  providers: [
    {
      provide: RateLimitStorage,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig) => {
        if (!config.redisUrl) return new MemoryRateLimitStorage();
        // Loaded only when used, so that instances without Redis do not load ioredis at start-up.
        const { RedisRateLimitStorage } = await import('./redis-rate-limit-storage.js');
        return new RedisRateLimitStorage(config.redisUrl);
      },
    },
    ApiKeyRateLimiter,
    AuthFailureLimiter,
  ],
  exports: [ApiKeyRateLimiter, AuthFailureLimiter],
})
export class RateLimitModule {}
