import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { pgPool } from '../database/pg-pool.js';
import { PetRow } from './pet.mapper.js';
import { PetStatus } from './pet-status.enum.js';

const COLUMNS = 'id, name, category_id, status';

/**
 * Keyset pages: a page deep in the table costs what the first one does (no
 * OFFSET rows to walk past). Without a status, `id > $1` is a range of the
 * primary key. With one, `(status, id) > ($1, $2) AND status <= $1` means
 * `status = $1 AND id > $2` but leaves the planner only `pets_status_id_idx`
 * to deliver the order: given the plain equality it may walk the primary key
 * and discard other statuses, which reads most of the table when the status
 * is rare among the oldest rows (old animals are mostly sold).
 */
export const PAGE_SQL = `SELECT ${COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`;
export const STATUS_PAGE_SQL =
  `SELECT ${COLUMNS} FROM pets WHERE (status, id) > ($1, $2) AND status <= $1 ORDER BY status, id LIMIT $3`;

export interface PetPageQuery {
  status?: PetStatus;
  limit: number;
  /** The last id of the previous page; 0 for the first page. */
  after: number;
}

export interface PetRowPage {
  rows: PetRow[];
  /** Whether rows exist beyond this page. */
  more: boolean;
}

export interface NewPetRow {
  name: string;
  categoryId: number;
  status: PetStatus;
}

/**
 * The three queries the API runs, written as plain parameterised SQL that
 * selects only the exposed columns; `pets_status_id_idx` and the primary key
 * serve them.
 */
@Injectable()
export class PetsRepository {
  private readonly pool: Pool;

  constructor(@InjectDataSource() dataSource: DataSource) {
    // Querying the pool directly skips the query runner TypeORM creates, broadcasts events around and releases
    // on every call, which profiling showed as a per-request cost (README, "Performance").
    this.pool = pgPool(dataSource);
  }

  /** One row more than `limit` is read to learn whether a next page exists without a second query. */
  async findPage({ status, limit, after }: PetPageQuery): Promise<PetRowPage> {
    const { rows } =
      status === undefined
        ? await this.pool.query<PetRow>(PAGE_SQL, [after, limit + 1])
        : await this.pool.query<PetRow>(STATUS_PAGE_SQL, [status, after, limit + 1]);
    const more = rows.length > limit;
    if (more) rows.pop();
    return { rows, more };
  }

  async findById(id: number): Promise<PetRow | undefined> {
    const { rows } = await this.pool.query<PetRow>(`SELECT ${COLUMNS} FROM pets WHERE id = $1`, [id]);
    return rows[0];
  }

  /** Straight on the pool, or inside a transaction when `manager` is a transaction's. */
  async insert(pet: NewPetRow, manager?: EntityManager): Promise<PetRow> {
    const sql = `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`;
    const values = [pet.name, pet.categoryId, pet.status];
    if (manager) return ((await manager.query(sql, values)) as PetRow[])[0];
    return (await this.pool.query<PetRow>(sql, values)).rows[0];
  }
}
