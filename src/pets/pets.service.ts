import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import { ApiError } from '../edge/errors/api-error.js';
import { ErrorCode } from '../edge/errors/error-code.js';
import { type IdempotencyScope, IdempotencyService, IdempotentOutcome } from './idempotency/idempotency.service.js';
import { NewPet } from './dto/create-pet.dto.js';
import { ListPetsQuery } from './dto/list-pets.query.js';
import { Pet } from './dto/pet.dto.js';
import { PageCursorCodec } from './page-cursor.codec.js';
import { PetStatus } from './pet-status.enum.js';
import { NewPetRow, PetsRepository } from './pets.repository.js';

@Injectable()
export class PetsService {
  constructor(
    private readonly pets: PetsRepository,
    private readonly cursors: PageCursorCodec,
    private readonly idempotency: IdempotencyService,
    private readonly database: Database,
  ) {}

  /** One page of animals, and the cursor of the next page when more match; `reader`: the caller's key lineage. */
  async list({ status, limit, cursor }: ListPetsQuery, reader?: string): Promise<{ pets: Pet[]; nextCursor?: string }> {
    const after = cursor === undefined ? 0 : this.pageStart(cursor, status);
    const { pets, more } = await this.pets.findPage({ status, limit, after }, reader);
    if (!more) return { pets };
    return { pets, nextCursor: this.cursors.encode({ after: pets[pets.length - 1].id, status }) };
  }

  /** `writer`: the caller's key lineage, whose reads then see this animal. */
  async create(newPet: NewPet, writer?: string): Promise<Pet> {
    const pet = await this.pets.insert(this.row(newPet));
    this.database.wrote(writer);
    return pet;
  }

  /** `create` at most once per Idempotency-Key, in the transaction that claims the key and stores the response. */
  async createIdempotently(newPet: NewPet, scope: IdempotencyScope): Promise<IdempotentOutcome<Pet>> {
    const row = this.row(newPet);
    const outcome = await this.idempotency.run(scope, newPet, async (transaction) => ({
      status: 201,
      body: await this.pets.insert(row, transaction),
    }));
    this.database.wrote(scope.lineage);
    return outcome;
  }

  async get(id: number, reader?: string): Promise<Pet> {
    const pet = await this.pets.findById(id, reader);
    if (!pet) throw new ApiError(404, ErrorCode.NotFound, `No animal has id ${id}.`);
    return pet;
  }

  private row(newPet: NewPet): NewPetRow {
    return { name: newPet.name, categoryId: newPet.categoryId, status: newPet.status ?? PetStatus.Available };
  }

  /** The id a cursor continues after; a cursor this service did not issue for this filter is a 400. */
  private pageStart(cursor: string, status: PetStatus | undefined): number {
    const position = this.cursors.decode(cursor);
    if (position && position.status === status) return position.after;
    const filter = position?.status === undefined ? 'without status' : `with status=${position.status}`;
    const message = position
      ? `The cursor was issued for the list ${filter}; send it ${filter}.`
      : 'The cursor is malformed or was not issued by this service; start again from the first page.';
    throw new ApiError(400, ErrorCode.InvalidCursor, message);
  }
}
