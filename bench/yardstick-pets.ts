/**
 * What the yardsticks share: the keys they accept (API_KEYS, comma-separated: bench.ts passes the one key it
 * issued); for the two that query with `pg` (ceiling.ts, nest-floor.ts), their statements, the response schema and
 * the row mapping.
 */
export const API_KEYS: ReadonlySet<string> = new Set((process.env.API_KEYS ?? '').split(','));

const COLUMNS = 'id, name, category_id, status';

/** The statements of ceiling.ts and nest-floor.ts (bench/statement-cost.ts times them beside the service's). */
export const YARDSTICK_SQL = {
  list: `SELECT ${COLUMNS} FROM pets ORDER BY id LIMIT $1`,
  listByStatus: `SELECT ${COLUMNS} FROM pets WHERE status = $1 ORDER BY id LIMIT $2`,
  byId: `SELECT ${COLUMNS} FROM pets WHERE id = $1`,
  insert: `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
} as const;

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
