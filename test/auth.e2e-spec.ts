import { parseApiKeys } from '../src/config/app-config.js';
import { request, startTestApp, TEST_KEY, TestApp } from './support/test-app.js';

const CHALLENGE = 'Bearer realm="animal-store"';
const INVALID_TOKEN = 'Bearer realm="animal-store", error="invalid_token"';
const INVALID_REQUEST = 'Bearer realm="animal-store", error="invalid_request"';
const error = (message: string) => ({ code: 'unauthorized', message, status: 401 });
const MISSING_KEY = error('An API key is required: send Authorization: Bearer <key>.');
const INVALID_KEY = error('The API key is not valid.');
const MALFORMED = error('The Authorization header is malformed: use Bearer <key>.');
const WRONG_KEY = 'Bearer wrong-key-0123456789abcdef';
const pet = (extra: object = {}) => JSON.stringify({ name: 'Rex', categoryId: 1, ...extra });

/** Every route of the contract, with a request that succeeds when the key is right. */
const ROUTES = [
  { name: 'listPets', method: 'GET', path: '/v1/pets', ok: 200 },
  { name: 'createPet', method: 'POST', path: '/v1/pets', ok: 201 },
  { name: 'getPet', method: 'GET', path: '/v1/pets/1', ok: 200 },
] as const;
type Route = (typeof ROUTES)[number];

/** [what is sent, Authorization (none if undefined), query string, body (createPet), challenge, Error body] */
type Refused = [string, string | undefined, string, string | undefined, string, object];
function missing(what: string, authorization?: string, query = '', body?: string): Refused {
  return [what, authorization, query, body, CHALLENGE, MISSING_KEY];
}
const basic = `Basic ${Buffer.from(`user:${TEST_KEY}`).toString('base64')}`;
const changed = `Bearer ${TEST_KEY.slice(0, -1)}${TEST_KEY.endsWith('f') ? 'e' : 'f'}`;
const refusedOn = (route: Route): Refused[] => [
  missing('no key'),
  ['a wrong key', WRONG_KEY, '', undefined, INVALID_TOKEN, INVALID_KEY],
  ['a valid key with one character changed', changed, '', undefined, INVALID_TOKEN, INVALID_KEY],
  missing('the Basic scheme carrying the key', basic),
  ['the key without a scheme', TEST_KEY, '', undefined, INVALID_REQUEST, MALFORMED],
  missing('the key as access_token in the query', undefined, `?access_token=${TEST_KEY}`),
  missing('access_token repeated in the query', undefined, `?access_token=${TEST_KEY}&access_token=${TEST_KEY}`),
  missing('access_token in bracket notation in the query', undefined, `?access_token[key]=${TEST_KEY}`),
  ...(route.method !== 'POST'
    ? []
    : [
        missing('the key as access_token in the body (a string)', undefined, '', pet({ access_token: TEST_KEY })),
        missing('access_token in the body as an array', undefined, '', pet({ access_token: [TEST_KEY, TEST_KEY] })),
        missing('access_token in the body as an object', undefined, '', pet({ access_token: { key: TEST_KEY } })),
        // The key is checked before the body: an unauthenticated caller learns nothing about it.
        missing('no key and a body breaking the schema', undefined, '', JSON.stringify({ id: 5 })),
      ]),
];

describe('auth (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    await t.sql.query(`INSERT INTO pets (name, category_id) VALUES ('Seed', 1)`);
  });
  afterAll(() => t.close());

  const countPets = async () =>
    Number((await t.sql.query<{ count: string }>('SELECT count(*) FROM pets')).rows[0].count);

  const call = (route: Route, authorization?: string, query = '', body = pet()) =>
    request(t.origin, `${route.path}${query}`, {
      method: route.method,
      headers: {
        ...(route.method === 'POST' ? { 'content-type': 'application/json' } : {}),
        ...(authorization === undefined ? {} : { authorization }),
      },
      body: route.method === 'POST' ? body : undefined,
    });

  it.each(ROUTES)('$name answers $ok to a valid key, the scheme in any letter case', async (route) => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'BeArEr']) {
      expect([scheme, (await call(route, `${scheme} ${TEST_KEY}`)).status]).toEqual([scheme, route.ok]);
    }
  });

  it.each(
    ROUTES.flatMap((route) => refusedOn(route).map((refused) => [route.name, refused[0], route, refused] as const)),
  )(
    '%s refuses %s with 401, its challenge and the Error body, and writes nothing',
    async (_name, _what, route, [, authorization, query, body, challenge, expected]) => {
      const before = await countPets();

      const response = await call(route, authorization, query, body);

      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(challenge);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual(expected);
      expect(await countPets()).toBe(before);
    },
  );

  it('with a valid header, treats access_token in the body as an unknown property (400)', async () => {
    const response = await call(ROUTES[1], `Bearer ${TEST_KEY}`, '', pet({ access_token: 'other' }));

    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      code: 'validation_failed',
      message: 'property access_token should not exist.',
      status: 400,
    });
  });

  it('with a valid header, ignores access_token in the query string like any unknown parameter', async () => {
    expect((await call(ROUTES[0], `Bearer ${TEST_KEY}`, '?access_token=other')).status).toBe(200);
  });

  it('accepts every key of API_KEYS', async () => {
    const keys = ['first-key-0123456789abcdef', 'second-key-0123456789abcdef'];
    const other = await startTestApp({ apiKeys: parseApiKeys(keys.join(',')) });
    try {
      for (const [key, status] of [...keys.map((key) => [key, 200] as const), [TEST_KEY, 401] as const]) {
        const response = await request(other.origin, '/v1/pets', { headers: { authorization: `Bearer ${key}` } });
        expect([key, response.status]).toEqual([key, status]);
      }
    } finally {
      await other.close();
    }
  });
});
