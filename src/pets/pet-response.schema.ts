import { PET_STATUSES } from './pet-status.enum.js';

/**
 * JSON Schemas of the `Pet` responses, given to Fastify (`@RouteSchema`) so it
 * serialises them with a compiled serializer instead of `JSON.stringify`.
 * They mirror `toPet`, which already whitelists the fields; a spec keeps the two in step.
 */
export const PET_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['id', 'name', 'categoryId', 'status'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    categoryId: { type: 'integer' },
    status: { type: 'string', enum: [...PET_STATUSES] },
  },
} as const;

export const PET_LIST_RESPONSE_SCHEMA = { type: 'array', items: PET_RESPONSE_SCHEMA } as const;
