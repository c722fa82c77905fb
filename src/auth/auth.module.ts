import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { ApiKeyThrottlerGuard } from './rate-limit/api-key-throttler.guard.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyRefusals } from './api-key-refusals.js';
import { ApiKeyStore } from './api-key-store.js';
import { BearerStrategy } from './bearer.strategy.js';
import { EnvApiKeyStore } from './env-api-key-store.js';

@Module({
  imports: [PassportModule, ApiKeysModule, RateLimitModule],
  providers: [
    BearerStrategy,
    ApiKeyRefusals,
    EnvApiKeyStore,
    ApiKeyStore,
    // In this order: the key is known before its budget is counted.
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_GUARD, useClass: ApiKeyThrottlerGuard },
  ],
})
export class AuthModule {}
