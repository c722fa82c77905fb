import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { withRetries } from '../database/database-faults.js';
import { Pet } from './dto/pet.dto.js';
import { PetEntity } from './pet.entity.js';
import { PetStatus } from './pet-status.enum.js';

/** `after` is the last id of the previous page; 0 for the first page. */
export type PetPageQuery = { status?: PetStatus; limit: number; after: number };
export type PetPage = { pets: Pet[]; more: boolean };
export type NewPetRow = Omit<Pet, 'id'>;
/** The columns the API exposes, as node-postgres reads them (int8 as strings). */
type PetRow = Pick<PetEntity, keyof Pet & keyof PetEntity>;

/** The only place a row becomes a response: whitelisted fields, int8 strings to JSON numbers. */
function toPet(row: PetRow): Pet {
  return { id: Number(row.id), name: row.name, categoryId: Number(row.categoryId), status: row.status };
}

const SELECT_PET = 'SELECT id, name, category_id AS "categoryId", status FROM pets';

// Keyset pages, one row more than `limit` to tell whether a next page exists. `(status, id) > ($1, $2) AND
// status <= $1` means `status = $1 AND id > $2` but leaves the planner only `pets_status_id_idx` to deliver the
// order: given the equality it may walk the primary key instead, past most of the table for a rare status.
const PAGE_ALL = `${SELECT_PET} WHERE id > $1 ORDER BY id LIMIT $2`;
const PAGE_BY_STATUS = `${SELECT_PET} WHERE (status, id) > ($1, $2) AND status <= $1 ORDER BY status, id LIMIT $3`;
const BY_ID = `${SELECT_PET} WHERE id = $1`;

/** The queries the API runs, as plain parameterised SQL on raw rows: no entity hydration, no implicit transaction. */
@Injectable()
export class PetsRepository {
  constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {}

  /** The SQL and parameters of a page (the page plans are checked against it). */
  boundPageQuery({ status, limit, after }: PetPageQuery): [sql: string, parameters: unknown[]] {
    return status === undefined ? [PAGE_ALL, [after, limit + 1]] : [PAGE_BY_STATUS, [status, after, limit + 1]];
  }

  async findPage(query: PetPageQuery): Promise<PetPage> {
    const rows = await withRetries(
      () => this.pets.query<PetRow[]>(...this.boundPageQuery(query)),
      this.pets.manager.connection,
    );
    const more = rows.length > query.limit;
    if (more) rows.pop();
    return { pets: rows.map(toPet), more };
  }

  async findById(id: number): Promise<Pet | undefined> {
    const [row] = await withRetries(
      () => this.pets.query<(PetRow | undefined)[]>(BY_ID, [id]),
      this.pets.manager.connection,
    );
    return row && toPet(row);
  }

  /** In `manager`'s transaction when given (its owner retries the whole transaction), else retried here. */
  insert(pet: NewPetRow, manager?: EntityManager): Promise<Pet> {
    return manager
      ? this.insertWith(manager, pet)
      : withRetries(() => this.insertWith(this.pets.manager, pet), this.pets.manager.connection);
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
