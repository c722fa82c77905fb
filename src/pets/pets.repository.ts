import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QueryBuilder, Repository, SelectQueryBuilder } from 'typeorm';
import type { IdempotencyScope } from './idempotency/idempotency-keys.repository.js';
import { withRetries } from '../database/database-faults.js';
import { IdempotencyService, IdempotentOutcome } from './idempotency/idempotency.service.js';
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

/** A statement as PostgreSQL receives it: the SQL text and its parameter values, in order. */
export type BoundQuery = [sql: string, parameters: unknown[]];

/**
 * A query the QueryBuilder builds once, the first time its shape is needed; a request then only binds its
 * values. Building takes TypeORM longer than the rest of the request's database work, and the text of a shape
 * never changes. Each named parameter is built with a unique placeholder value, which tells where the
 * QueryBuilder put it in the parameter list (`:status` twice is one `$1`).
 */
class CompiledQuery<K extends string> {
  private readonly sql: string;
  private readonly order: K[];

  constructor(names: readonly K[], build: (placeholders: Record<K, string>) => QueryBuilder<PetEntity>) {
    const placeholders = Object.fromEntries(names.map((name) => [name, `\u0000${name}`])) as Record<K, string>;
    const [sql, parameters] = build(placeholders).getQueryAndParameters();
    this.sql = sql;
    this.order = parameters.map((value) => names.find((name) => placeholders[name] === value)!);
  }

  bind(values: Record<K, unknown>): BoundQuery {
    return [this.sql, this.order.map((name) => values[name])];
  }
}

/**
 * The queries the API runs, built by TypeORM's QueryBuilder from the entity: only the exposed columns, read as
 * raw rows (no entity hydration) and turned into responses once, by `toPet`. `pets_status_id_idx` and the
 * primary key serve them.
 */
@Injectable()
export class PetsRepository {
  /** Page queries by status filter and limit (LIMIT is part of the text): at most 2 x 100 shapes. */
  private readonly pages = new Map<string, CompiledQuery<'status' | 'after'>>();
  private readonly byId: CompiledQuery<'id'>;
  private readonly insertion: CompiledQuery<'name' | 'categoryId' | 'status'>;

  constructor(
    @InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>,
    private readonly idempotency: IdempotencyService,
  ) {
    this.byId = new CompiledQuery(['id'], ({ id }) => this.selectExposed().where('pet.id = :id', { id }));
    this.insertion = new CompiledQuery(['name', 'categoryId', 'status'], ({ name, categoryId, status }) =>
      this.pets
        .createQueryBuilder()
        .insert()
        // Placeholders stand in for the values; the text does not depend on them.
        .values({ name, categoryId, status: status as PetStatus })
        .returning(['id'])
        .updateEntity(false),
    );
  }

  /**
   * Keyset pages: a page deep in the table costs what the first one does (no OFFSET rows to walk past).
   * Without a status, `id > :after` is a range of the primary key. With one, `(status, id) > (:status, :after)
   * AND status <= :status` means `status = :status AND id > :after` but leaves the planner only
   * `pets_status_id_idx` to deliver the order: given the plain equality it may walk the primary key and
   * discard other statuses, which reads most of the table when the status is rare among the oldest rows
   * (old animals are mostly sold). One row more than `limit` tells whether a next page exists.
   */
  boundPageQuery({ status, limit, after }: PetPageQuery): BoundQuery {
    const shape = `${status === undefined ? 'all' : 'status'} ${limit}`;
    let page = this.pages.get(shape);
    if (!page) {
      page = new CompiledQuery(['status', 'after'], (p) => {
        const query = this.selectExposed().limit(limit + 1);
        if (status === undefined) return query.where('pet.id > :after', { after: p.after }).orderBy('pet.id');
        return query
          .where('(pet.status, pet.id) > (:status, :after)', p)
          .andWhere('pet.status <= :status')
          .orderBy('pet.status')
          .addOrderBy('pet.id');
      });
      this.pages.set(shape, page);
    }
    return page.bind({ status, after });
  }

  async findPage(query: PetPageQuery): Promise<PetPage> {
    const rows: PetRow[] = await withRetries(() => this.pets.query(...this.boundPageQuery(query)));
    const more = rows.length > query.limit;
    if (more) rows.pop();
    return { pets: rows.map(toPet), more };
  }

  async findById(id: number): Promise<Pet | undefined> {
    const [row]: (PetRow | undefined)[] = await withRetries(() => this.pets.query(...this.byId.bind({ id })));
    return row && toPet(row);
  }

  insert(pet: NewPetRow): Promise<Pet> {
    return withRetries(() => this.insertWith(this.pets, pet));
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
    const categoryId = String(pet.categoryId);
    const [{ id }] = await pets.query<Pick<PetRow, 'id'>[]>(...this.insertion.bind({ ...pet, categoryId }));
    return toPet({ ...pet, id, categoryId });
  }

  private selectExposed(): SelectQueryBuilder<PetEntity> {
    const query = this.pets.createQueryBuilder('pet').select([]);
    for (const column of EXPOSED_COLUMNS) query.addSelect(`pet.${column}`, column);
    return query;
  }
}
