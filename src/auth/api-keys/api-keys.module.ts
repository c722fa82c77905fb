import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyEntity } from './api-key.entity.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { DatabaseApiKeyStore } from './database-api-key-store.js';
import { ExpiringKeysGauge } from './expiring-keys-gauge.js';
import { ExpiryWarnings } from './expiry-warnings.js';
import { LastUsedRecorder } from './last-used-recorder.js';

@Module({
  imports: [TypeOrmModule.forFeature([ApiKeyEntity])],
  providers: [ApiKeysRepository, LastUsedRecorder, ExpiryWarnings, ExpiringKeysGauge, DatabaseApiKeyStore],
  exports: [DatabaseApiKeyStore],
})
export class ApiKeysModule {}
