import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { PetEntity } from './pet.entity.js';
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
  constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {}

  findPage({ status, limit }: PetPageQuery): Promise<PetRow[]> {
    return status === undefined
      ? this.pets.query(`SELECT ${COLUMNS} FROM pets ORDER BY id LIMIT $1`, [limit])
      : this.pets.query(`SELECT ${COLUMNS} FROM pets WHERE status = $1 ORDER BY id LIMIT $2`, [status, limit]);
  }

  async findById(id: number): Promise<PetRow | undefined> {
    const rows: PetRow[] = await this.pets.query(`SELECT ${COLUMNS} FROM pets WHERE id = $1`, [id]);
    return rows[0];
  }

  /** Outside a transaction unless `manager` is a transaction's. */
  async insert(pet: NewPetRow, manager: EntityManager = this.pets.manager): Promise<PetRow> {
    const rows: PetRow[] = await manager.query(
      `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
      [pet.name, pet.categoryId, pet.status],
    );
    return rows[0];
  }
}
