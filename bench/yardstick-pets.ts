/** What the two yardsticks (ceiling.ts, nest-floor.ts) share: the columns they read, the response schema and the row mapping. */
export const COLUMNS = 'id, name, category_id, status';

export const STATUS_SCHEMA = { type: 'string', enum: ['available', 'pending', 'sold'] } as const;

export const PET_SCHEMA = {
  type: 'object',
  required: ['id', 'name', 'categoryId', 'status'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, categoryId: { type: 'integer' }, status: STATUS_SCHEMA },
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
