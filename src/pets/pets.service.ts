import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../http/errors/api-error.js';
import { ErrorCode } from '../http/errors/error-code.js';
import type { IdempotencyScope } from '../http/idempotency/idempotency-keys.repository.js';
import { IdempotencyService, IdempotentOutcome } from '../http/idempotency/idempotency.service.js';
import { requestFingerprint } from '../http/idempotency/request-fingerprint.js';
import { NewPet } from './dto/create-pet.dto.js';
import { ListPetsQuery } from './dto/list-pets.query.js';
import { Pet } from './dto/pet.dto.js';
import { PageCursorCodec } from './page-cursor.codec.js';
import { toPet } from './pet.mapper.js';
import { PetStatus } from './pet-status.enum.js';
import { PetsRepository } from './pets.repository.js';

export interface PetPage {
  pets: Pet[];
  /** Present when more animals match: the `cursor` of the next page. */
  nextCursor?: string;
}

@Injectable()
export class PetsService {
  constructor(
    private readonly pets: PetsRepository,
    private readonly cursors: PageCursorCodec,
    private readonly idempotency: IdempotencyService,
  ) {}

  async list({ status, limit, cursor }: ListPetsQuery): Promise<PetPage> {
    const after = cursor === undefined ? 0 : this.pageStart(cursor, status);
    const { rows, more } = await this.pets.findPage({ status, limit, after });
    const pets = rows.map(toPet);
    if (!more) return { pets };
    return { pets, nextCursor: this.cursors.encode({ after: pets[pets.length - 1].id, status }) };
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

  /** The id a cursor continues after; a cursor this service did not issue for this filter is a 400. */
  private pageStart(cursor: string, status: PetStatus | undefined): number {
    const position = this.cursors.decode(cursor);
    if (position === undefined) {
      throw new ApiError(
        400,
        ErrorCode.InvalidCursor,
        'The cursor is malformed or was not issued by this service; start again from the first page.',
      );
    }
    if (position.status !== status) {
      const filter = position.status === undefined ? 'without status' : `with status=${position.status}`;
      const message = `The cursor was issued for the list ${filter}; send it ${filter}.`;
      throw new ApiError(400, ErrorCode.InvalidCursor, message);
    }
    return position.after;
  }
}
