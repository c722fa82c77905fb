import { Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { IdempotencyKeyEntity } from './idempotency/idempotency-key.entity.js';
import { IdempotencyKeysRepository } from './idempotency/idempotency-keys.repository.js';
import { IdempotencyPurgeService } from './idempotency/idempotency-purge.service.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import { PageCursorCodec } from './page-cursor.codec.js';
import { PetEntity } from './pet.entity.js';
import { PetsController } from './pets.controller.js';
import { PetsRepository } from './pets.repository.js';
import { PetsService } from './pets.service.js';

// loadConfig refuses to start production without CURSOR_SECRET, so the random fallback only serves development.
function pageCursorCodec({ cursorSecret }: AppConfig): PageCursorCodec {
  if (cursorSecret === undefined)
    new Logger('Pagination').warn(
      'CURSOR_SECRET is not set: pagination cursors are signed with a random secret and stop working when this process restarts.',
    );
  return new PageCursorCodec(cursorSecret ?? randomBytes(32));
}

@Module({
  imports: [TypeOrmModule.forFeature([PetEntity, IdempotencyKeyEntity])],
  controllers: [PetsController],
  providers: [
    PetsService,
    PetsRepository,
    { provide: PageCursorCodec, inject: [APP_CONFIG], useFactory: pageCursorCodec },
    IdempotencyKeysRepository,
    IdempotencyService,
    IdempotencyPurgeService,
  ],
})
export class PetsModule {}
