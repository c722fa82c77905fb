/**
 * The yardstick, not part of the product: the three routes of the API (plus
 * create) on the same table with nothing but Fastify 5 and `pg`, the fastest a
 * Node stack serves them. `npm run bench` runs it beside the service.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { API_KEYS, PET_SCHEMA, PetRow, STATUS_SCHEMA, toPet, YARDSTICK_SQL } from './yardstick-pets.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify({ bodyLimit: 16 * 1024 });

const error = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
} as const;

app.addHook('onRequest', async (request, reply) => {
  const header = request.headers.authorization;
  if (!header?.startsWith('Bearer ') || !API_KEYS.has(header.slice(7))) {
    return reply.code(401).send({ code: 'unauthorized', message: 'The API key is not valid.', status: 401 });
  }
});

app.get<{ Querystring: { limit: number; status?: string } }>(
  '/v1/pets',
  {
    schema: {
      querystring: {
        type: 'object',
        properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, status: STATUS_SCHEMA },
      },
      response: { 200: { type: 'array', items: PET_SCHEMA } },
    },
  },
  async (request) => {
    const { limit, status } = request.query;
    const { rows } =
      status === undefined
        ? await pool.query<PetRow>(YARDSTICK_SQL.list, [limit])
        : await pool.query<PetRow>(YARDSTICK_SQL.listByStatus, [status, limit]);
    return rows.map(toPet);
  },
);

app.get<{ Params: { petId: number } }>(
  '/v1/pets/:petId',
  {
    schema: {
      params: { type: 'object', properties: { petId: { type: 'integer', minimum: 1 } } },
      response: { 200: PET_SCHEMA, 404: error },
    },
  },
  async (request, reply) => {
    const { rows } = await pool.query<PetRow>(YARDSTICK_SQL.byId, [request.params.petId]);
    if (rows.length === 0) return reply.code(404).send({ code: 'not_found', message: 'No such animal.', status: 404 });
    return toPet(rows[0]);
  },
);

app.post<{ Body: { name: string; categoryId: number; status?: string } }>(
  '/v1/pets',
  {
    schema: {
      body: {
        type: 'object',
        required: ['name', 'categoryId'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 255 },
          categoryId: { type: 'integer', minimum: 1 },
          status: STATUS_SCHEMA,
        },
      },
      response: { 201: PET_SCHEMA },
    },
  },
  async (request, reply) => {
    const { name, categoryId, status = 'available' } = request.body;
    const { rows } = await pool.query<PetRow>(YARDSTICK_SQL.insert, [name, categoryId, status]);
    return reply.code(201).send(toPet(rows[0]));
  },
);

process.once('SIGTERM', () => void app.close().then(() => pool.end()));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
