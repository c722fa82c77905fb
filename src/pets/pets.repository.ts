import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { PetRow } from './pet.mapper.js';
import { PetStatus } from './pet-status.enum.js';

const COLUMNS = 'id, name, category_id, status';

export interface PetPageQuery {
  status?: PetStatus;
  limit: number;
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
    // The node-postgres pool behind TypeORM's DataSource (same connections, limits and timeouts). Querying it
    // directly skips the query runner TypeORM creates, broadcasts events around and releases on every call,
    // which profiling showed as a per-request cost (README, "Performance").
    this.pool = (dataSource.driver as PostgresDriver).master as Pool;
  }

  async findPage({ status, limit }: PetPageQuery): Promise<PetRow[]> {
    const { rows } =
      status === undefined
        ? await this.pool.query<PetRow>(`SELECT ${COLUMNS} FROM pets ORDER BY id LIMIT $1`, [limit])
        : await this.pool.query<PetRow>(`SELECT ${COLUMNS} FROM pets WHERE status = $1 ORDER BY id LIMIT $2`, [
            status,
            limit,
          ]);
    return rows;
  }

  async findById(id: number): Promise<PetRow | undefined> {
    const { rows } = await this.pool.query<PetRow>(`SELECT ${COLUMNS} FROM pets WHERE id = $1`, [id]);
    return rows[0];
  }

  async insert(pet: NewPetRow): Promise<PetRow> {
    const { rows } = await this.pool.query<PetRow>(
      `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
      [pet.name, pet.categoryId, pet.status],
    );
    return rows[0];
  }
}
