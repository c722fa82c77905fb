import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { PetEntity } from './pet.entity.js';
import { PetsController } from './pets.controller.js';
import { PetsRepository } from './pets.repository.js';
import { PetsService } from './pets.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([PetEntity]), IdempotencyModule],
  controllers: [PetsController],
  providers: [PetsService, PetsRepository],
})
export class PetsModule {}
