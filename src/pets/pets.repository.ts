import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository, SelectQueryBuilder } from 'typeorm';
import type { IdempotencyScope } from '../http/idempotency/idempotency-keys.repository.js';
import { IdempotencyService, IdempotentOutcome } from '../http/idempotency/idempotency.service.js';
import { Pet } from './dto/pet.dto.js';
import { PetEntity } from './pet.entity.js';
import { EXPOSED_COLUMNS, PetRow, toPet } from './pet.mapper.js';
import { PetStatus } from './pet-status.enum.js';

export interface PetPageQuery {
  status?: PetStatus;
  limit: number;
  /** The last id of the previous page; 0 for the first page. */
  after: number;
}

export interface PetPage {
  pets: Pet[];
  /** Whether animals exist beyond this page. */
  more: boolean;
}

export interface NewPetRow {
  name: string;
  categoryId: number;
  status: PetStatus;
}

/**
 * The queries the API runs, through TypeORM's QueryBuilder: only the exposed columns, read as raw rows
 * (no entity hydration) and turned into responses once, by `toPet`. `pets_status_id_idx` and the primary
 * key serve them.
 */
@Injectable()
export class PetsRepository {
  constructor(
    @InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>,
    private readonly idempotency: IdempotencyService,
  ) {}

  /**
   * Keyset pages: a page deep in the table costs what the first one does (no OFFSET rows to walk past).
   * Without a status, `id > :after` is a range of the primary key. With one, `(status, id) > (:status, :after)
   * AND status <= :status` means `status = :status AND id > :after` but leaves the planner only
   * `pets_status_id_idx` to deliver the order: given the plain equality it may walk the primary key and
   * discard other statuses, which reads most of the table when the status is rare among the oldest rows
   * (old animals are mostly sold). One row more than `limit` tells whether a next page exists.
   */
  pageQuery({ status, limit, after }: PetPageQuery): SelectQueryBuilder<PetEntity> {
    const query = this.selectExposed().limit(limit + 1);
    if (status === undefined) return query.where('pet.id > :after', { after }).orderBy('pet.id');
    return query
      .where('(pet.status, pet.id) > (:status, :after)', { status, after })
      .andWhere('pet.status <= :status')
      .orderBy('pet.status')
      .addOrderBy('pet.id');
  }

  async findPage(query: PetPageQuery): Promise<PetPage> {
    const rows = await this.pageQuery(query).getRawMany<PetRow>();
    const more = rows.length > query.limit;
    if (more) rows.pop();
    return { pets: rows.map(toPet), more };
  }

  async findById(id: number): Promise<Pet | undefined> {
    const row = await this.selectExposed().where('pet.id = :id', { id }).getRawOne<PetRow>();
    return row && toPet(row);
  }

  insert(pet: NewPetRow): Promise<Pet> {
    return this.insertWith(this.pets, pet);
  }

  /** `insert` at most once per Idempotency-Key, in the transaction that claims the key and stores the response. */
  insertIdempotently(pet: NewPetRow, scope: IdempotencyScope, fingerprint: string): Promise<IdempotentOutcome<Pet>> {
    return this.idempotency.run(scope, fingerprint, async (manager) => ({
      status: 201,
      body: await this.insertWith(manager.withRepository(this.pets), pet),
    }));
  }

  /** One round trip: the stored values are the ones sent, and `RETURNING` gives the id. */
  private async insertWith(pets: Repository<PetEntity>, pet: NewPetRow): Promise<Pet> {
    const result = await pets
      .createQueryBuilder()
      .insert()
      .values({ name: pet.name, categoryId: String(pet.categoryId), status: pet.status })
      .returning(['id'])
      .updateEntity(false)
      .execute();
    return toPet({ ...pet, id: (result.raw as Pick<PetRow, 'id'>[])[0].id, categoryId: String(pet.categoryId) });
  }

  private selectExposed(): SelectQueryBuilder<PetEntity> {
    const query = this.pets.createQueryBuilder('pet').select([]);
    for (const column of EXPOSED_COLUMNS) query.addSelect(`pet.${column}`, column);
    return query;
  }
}
