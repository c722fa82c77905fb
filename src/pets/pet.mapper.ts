import { Pet } from './dto/pet.dto.js';
import type { PetEntity } from './pet.entity.js';

/** The entity's properties the API exposes; the repository selects only these. */
export const EXPOSED_COLUMNS = ['id', 'name', 'categoryId', 'status'] as const satisfies readonly (keyof PetEntity &
  keyof Pet)[];

/** A row holding the exposed columns under their property names, as the repository reads it (int8 as strings). */
export type PetRow = Pick<PetEntity, (typeof EXPOSED_COLUMNS)[number]>;

/** The only place a row becomes a response: whitelisted fields, int8 strings to JSON numbers. */
export function toPet(row: PetRow): Pet {
  return { id: Number(row.id), name: row.name, categoryId: Number(row.categoryId), status: row.status };
}
