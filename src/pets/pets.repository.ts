import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { withRetries } from '../database/database-faults.js';
import { Pet } from './dto/pet.dto.js';
import { PetEntity } from './pet.entity.js';
import { PetRow, toPet } from './pet.mapper.js';
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

/** Only the columns the API exposes, under the names `toPet` reads, as raw rows (no entity hydration). */
const SELECT_PET = 'SELECT id, name, category_id AS "categoryId", status FROM pets';

/**
 * Keyset pages: a page deep in the table costs what the first one does (no OFFSET rows to walk past).
 * Without a status, `id > $1` is a range of the primary key. With one, `(status, id) > ($1, $2) AND status <= $1`
 * means `status = $1 AND id > $2` but leaves the planner only `pets_status_id_idx` to deliver the order: given the
 * plain equality it may walk the primary key and discard other statuses, which reads most of the table when the
 * status is rare among the oldest rows (old animals are mostly sold). One row more than `limit` tells whether a
 * next page exists.
 */
const PAGE_ALL = `${SELECT_PET} WHERE id > $1 ORDER BY id LIMIT $2`;
const PAGE_BY_STATUS = `${SELECT_PET} WHERE (status, id) > ($1, $2) AND status <= $1 ORDER BY status, id LIMIT $3`;

/**
 * The queries the API runs, as plain parameterised SQL: TypeORM's `find` and `save` would build the SQL and hydrate
 * entities on every call, and `save` wraps an insert in a transaction of its own. `pets_status_id_idx` and the
 * primary key serve them.
 */
@Injectable()
export class PetsRepository {
  constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {}

  /** The SQL and parameters of a page (the page plans are checked against it). */
  boundPageQuery({ status, limit, after }: PetPageQuery): BoundQuery {
    if (status === undefined) return [PAGE_ALL, [after, limit + 1]];
    return [PAGE_BY_STATUS, [status, after, limit + 1]];
  }

  async findPage(query: PetPageQuery): Promise<PetPage> {
    const rows = await withRetries(() => this.pets.query<PetRow[]>(...this.boundPageQuery(query)));
    const more = rows.length > query.limit;
    if (more) rows.pop();
    return { pets: rows.map(toPet), more };
  }

  async findById(id: number): Promise<Pet | undefined> {
    const [row] = await withRetries(() => this.pets.query<(PetRow | undefined)[]>(`${SELECT_PET} WHERE id = $1`, [id]));
    return row && toPet(row);
  }

  /**
   * One round trip: the stored values are the ones sent, and `RETURNING` gives the id. In `manager`'s transaction
   * when one is given (its owner retries the whole transaction), otherwise on its own and retried here.
   */
  insert(pet: NewPetRow, manager?: EntityManager): Promise<Pet> {
    if (manager) return this.insertWith(manager, pet);
    return withRetries(() => this.insertWith(this.pets.manager, pet));
  }

  private async insertWith(manager: EntityManager, pet: NewPetRow): Promise<Pet> {
    const categoryId = String(pet.categoryId);
    const [{ id }] = await manager.query<Pick<PetRow, 'id'>[]>(
      'INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING id',
      [pet.name, categoryId, pet.status],
    );
    return toPet({ ...pet, id, categoryId });
  }
}
