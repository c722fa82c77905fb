import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyStore } from './api-key-store.js';
import { BearerStrategy } from './bearer.strategy.js';
import { CombinedApiKeyStore } from './combined-api-key-store.js';
import { EnvApiKeyStore } from './env-api-key-store.js';

@Module({
  imports: [PassportModule, ApiKeysModule, RateLimitModule],
  providers: [
    BearerStrategy,
    EnvApiKeyStore,
    { provide: ApiKeyStore, useClass: CombinedApiKeyStore },
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
})
export class AuthModule {}
