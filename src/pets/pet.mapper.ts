import { Pet } from './dto/pet.dto.js';
import type { PetEntity } from './pet.entity.js';

/** The columns the API exposes, under their property names, as the repository reads them (int8 as strings). */
export type PetRow = Pick<PetEntity, keyof Pet & keyof PetEntity>;

/** The only place a row becomes a response: whitelisted fields, int8 strings to JSON numbers. */
export function toPet(row: PetRow): Pet {
  return { id: Number(row.id), name: row.name, categoryId: Number(row.categoryId), status: row.status };
}
