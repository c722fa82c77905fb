/**
 * What the yardsticks share: the keys they accept (API_KEYS, comma-separated: bench.ts passes the one key it
 * issued); for the two that query with `pg` (ceiling.ts, nest-floor.ts), the columns they read, the response
 * schema and the row mapping.
 */
export const API_KEYS: ReadonlySet<string> = new Set((process.env.API_KEYS ?? '').split(','));

export const COLUMNS = 'id, name, category_id, status';

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;

export const STATUS_SCHEMA = { type: 'string', enum: PET_STATUSES } as const;

export const PET_SCHEMA = {
  type: 'object',
  required: ['id', 'name', 'categoryId', 'status'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    categoryId: { type: 'integer' },
    status: STATUS_SCHEMA,
  },
} as const;

export interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: string;
}

export const toPet = (row: PetRow) => ({
  id: Number(row.id),
  name: row.name,
  categoryId: Number(row.category_id),
  status: row.status,
});
