import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { ApiKeyGuard } from './api-key.guard.js';
import { ApiKeyStore } from './api-key-store.js';
import { BearerStrategy } from './bearer.strategy.js';
import { EnvApiKeyStore } from './env-api-key-store.js';

@Module({
  imports: [PassportModule],
  providers: [
    BearerStrategy,
    { provide: ApiKeyStore, useClass: EnvApiKeyStore },
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
})
export class AuthModule {}
