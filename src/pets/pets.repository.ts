import { Injectable } from '@nestjs/common';
import { Database, type Statement, type UnitOfWork } from '../database/database.js';
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
const PAGE_ALL: Statement = { name: 'pets-page', text: `${SELECT_PET} WHERE id > $1 ORDER BY id LIMIT $2` };
const PAGE_BY_STATUS: Statement = {
  name: 'pets-page-by-status',
  text: `${SELECT_PET} WHERE (status, id) > ($1, $2) AND status <= $1 ORDER BY status, id LIMIT $3`,
};
// The first page has no lower bound: given one in the histogram's first bin (`id > 0`), the planner reads the primary
// key for the actual lowest id on every call (docs/performance.md, "The database's work per request").
const FIRST_PAGE_ALL: Statement = { name: 'pets-first-page', text: `${SELECT_PET} ORDER BY id LIMIT $1` };
const BY_ID: Statement = { name: 'pets-by-id', text: `${SELECT_PET} WHERE id = $1` };
const INSERT: Statement = {
  name: 'pets-insert',
  text: 'INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING id',
};

/** The statement and parameters of a page (the page plans are checked against it). */
export function pageStatement({ status, limit, after }: PetPageQuery): [statement: Statement, parameters: unknown[]] {
  if (status !== undefined) return [PAGE_BY_STATUS, [status, after, limit + 1]];
  return after === 0 ? [FIRST_PAGE_ALL, [limit + 1]] : [PAGE_ALL, [after, limit + 1]];
}

/** The queries the API runs, as plain parameterised SQL on raw rows: no entity hydration, no implicit transaction. */
@Injectable()
export class PetsRepository {
  constructor(private readonly database: Database) {}

  /** `reader`: whose request, so that its own writes are never read from a replica behind them. */
  async findPage(query: PetPageQuery, reader?: string): Promise<PetPage> {
    const rows = await this.database.read<PetRow[]>(...pageStatement(query), { lineage: reader });
    const more = rows.length > query.limit;
    if (more) rows.pop();
    return { pets: rows.map(toPet), more };
  }

  /** An id no replica has yet is read again on the primary: a client that was just given it finds it. */
  async findById(id: number, reader?: string): Promise<Pet | undefined> {
    const [row] = await this.database.read<PetRow[]>(BY_ID, [id], { lineage: reader, again: (rows) => !rows.length });
    return row && toPet(row);
  }

  /** In `transaction` when given (its owner retries the whole of it), else on its own. */
  async insert(pet: NewPetRow, transaction?: UnitOfWork): Promise<Pet> {
    const categoryId = String(pet.categoryId);
    const parameters = [pet.name, categoryId, pet.status];
    const [{ id }] = await (transaction ?? this.database).query<Pick<PetRow, 'id'>[]>(INSERT, parameters);
    return toPet({ ...pet, id, categoryId });
  }
}
