import { request, TEST_KEY } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

const CHALLENGE = 'Bearer realm="animal-store"';
const error = (message: string) => ({ code: 'unauthorized', message, status: 401 });
const MISSING_KEY = error('An API key is required: send Authorization: Bearer <key>.');
const pet = (extra: object = {}) => JSON.stringify({ name: 'Rex', categoryId: 1, ...extra });

const ROUTES = {
  listPets: { method: 'GET', path: '/v1/pets' },
  createPet: { method: 'POST', path: '/v1/pets' },
  getPet: { method: 'GET', path: '/v1/pets/1' },
} as const;
type Sent = { authorization?: string; query?: string; body?: string };

/**
 * Each credential alone: src/auth/api-key.guard.spec.ts. Here, what only a real request shows: every route guarded,
 * the answer on the wire, the query and body as parsed, the key checked before the schema.
 */
const REFUSED: { what: string; route: keyof typeof ROUTES; sent: Sent; tokenError?: string; body?: object }[] = [
  ...(['listPets', 'createPet', 'getPet'] as const).map((route) => ({ what: 'no key', route, sent: {} })),
  {
    what: 'a wrong key',
    route: 'listPets',
    sent: { authorization: 'Bearer wrong-key-0123456789abcdef' },
    tokenError: 'invalid_token',
    body: error('The API key is not valid.'),
  },
  {
    what: 'the key without a scheme',
    route: 'getPet',
    sent: { authorization: TEST_KEY },
    tokenError: 'invalid_request',
    body: error('The Authorization header is malformed: use Bearer <key>.'),
  },
  { what: 'the key as access_token in the query', route: 'listPets', sent: { query: `?access_token=${TEST_KEY}` } },
  { what: 'the key as access_token in the body', route: 'createPet', sent: { body: pet({ access_token: TEST_KEY }) } },
  // An unauthenticated caller learns nothing about the body.
  { what: 'no key and a body breaking the schema', route: 'createPet', sent: { body: JSON.stringify({ id: 5 }) } },
];

describe('auth (e2e)', () => {
  const t = testAppPerBlock();

  beforeAll(async () => {
    await t.sql.query(`INSERT INTO pets (name, category_id) VALUES ('Seed', 1)`);
  });

  const countPets = async () =>
    Number((await t.sql.query<{ count: string }>('SELECT count(*) FROM pets')).rows[0].count);

  it.each(REFUSED)(
    'refuses $what on $route with 401, its challenge and the Error body, and writes nothing',
    async ({ route, sent: { authorization, query = '', body = pet() }, tokenError, body: expected }) => {
      const { method, path } = ROUTES[route];
      const before = await countPets();

      const response = await request(t.origin, `${path}${query}`, {
        method,
        headers: {
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          ...(authorization === undefined ? {} : { authorization }),
        },
        body: method === 'POST' ? body : undefined,
      });

      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(
        tokenError ? `${CHALLENGE}, error="${tokenError}"` : CHALLENGE,
      );
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual(expected ?? MISSING_KEY);
      expect(await countPets()).toBe(before);
    },
  );
});
