import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyEntity } from './api-keys/api-key.entity.js';
import { ApiKeysRepository } from './api-keys/api-keys.repository.js';
import { ExpiringKeysGauge } from './api-keys/expiring-keys-gauge.js';
import { ExpiryWarnings } from './api-keys/expiry-warnings.js';
import { LastUsedRecorder } from './api-keys/last-used-recorder.js';
import { ApiKeyThrottlerGuard } from './rate-limit/api-key-throttler.guard.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyRefusals } from './api-key-refusals.js';
import { ApiKeyStore } from './api-key-store.js';
import { BearerStrategy } from './bearer.strategy.js';

@Module({
  imports: [PassportModule, TypeOrmModule.forFeature([ApiKeyEntity]), RateLimitModule],
  providers: [
    ApiKeysRepository,
    LastUsedRecorder,
    ExpiryWarnings,
    ExpiringKeysGauge,
    ApiKeyStore,
    BearerStrategy,
    ApiKeyRefusals,
    // In this order: the key is known before its budget is counted.
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_GUARD, useClass: ApiKeyThrottlerGuard },
  ],
})
export class AuthModule {}
