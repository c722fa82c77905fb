import { Pet } from './dto/pet.dto.js';
import { PetStatus } from './pet-status.enum.js';

/** The columns the API exposes, as node-postgres returns them (int8 as strings). */
export interface PetRow {
  id: string | number;
  name: string;
  category_id: string | number;
  status: PetStatus;
}

/** The only place a row becomes a response: whitelisted fields, int8 strings to JSON numbers. */
export function toPet(row: PetRow): Pet {
  return { id: Number(row.id), name: row.name, categoryId: Number(row.category_id), status: row.status };
}
