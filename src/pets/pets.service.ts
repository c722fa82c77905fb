import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../http/api-error.js';
import { ErrorCode } from '../http/error-code.js';
import type { IdempotencyScope } from '../idempotency/idempotency-keys.repository.js';
import { IdempotencyService, IdempotentOutcome } from '../idempotency/idempotency.service.js';
import { requestFingerprint } from '../idempotency/request-fingerprint.js';
import { NewPet } from './dto/create-pet.dto.js';
import { ListPetsQuery } from './dto/list-pets.query.js';
import { Pet } from './dto/pet.dto.js';
import { toPet } from './pet.mapper.js';
import { PetStatus } from './pet-status.enum.js';
import { PetsRepository } from './pets.repository.js';

@Injectable()
export class PetsService {
  constructor(
    private readonly pets: PetsRepository,
    private readonly idempotency: IdempotencyService,
  ) {}

  async list(query: ListPetsQuery): Promise<Pet[]> {
    const rows = await this.pets.findPage({ status: query.status, limit: query.limit });
    return rows.map(toPet);
  }

  async create(newPet: NewPet, manager?: EntityManager): Promise<Pet> {
    const row = await this.pets.insert(
      { name: newPet.name, categoryId: newPet.categoryId, status: newPet.status ?? PetStatus.Available },
      manager,
    );
    return toPet(row);
  }

  /** `create` at most once per Idempotency-Key; a repeat gets the first response back. */
  createIdempotently(newPet: NewPet, scope: IdempotencyScope): Promise<IdempotentOutcome<Pet>> {
    return this.idempotency.run(scope, requestFingerprint(newPet), async (manager) => ({
      status: 201,
      body: await this.create(newPet, manager),
    }));
  }

  async get(id: number): Promise<Pet> {
    const row = await this.pets.findById(id);
    if (!row) throw new ApiError(404, ErrorCode.NotFound, `No animal has id ${id}.`);
    return toPet(row);
  }
}
