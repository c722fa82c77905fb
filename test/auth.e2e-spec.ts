import { parseApiKeys } from '../src/config/app-config.js';
import { ApiResponse, request, startTestApp, TEST_KEY, TestApp } from './support/test-app.js';

const CHALLENGE = 'Bearer realm="animal-store"';
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="animal-store", error="invalid_token"';
const MISSING_KEY = {
  code: 'unauthorized',
  message: 'An API key is required: send Authorization: Bearer <key>.',
  status: 401,
};
const INVALID_KEY = { code: 'unauthorized', message: 'The API key is not valid.', status: 401 };

const VALID_PET = JSON.stringify({ name: 'Rex', categoryId: 1 });

/** Every route of the contract, with a request that succeeds when the key is right. */
const ROUTES = [
  { name: 'listPets', method: 'GET', path: '/v1/pets', ok: 200 },
  { name: 'createPet', method: 'POST', path: '/v1/pets', body: VALID_PET, ok: 201 },
  { name: 'getPet', method: 'GET', path: '/v1/pets/1', ok: 200 },
] as const;

describe('auth (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    await t.sql.query(`INSERT INTO pets (name, category_id) VALUES ('Seed', 1)`);
  });
  afterAll(() => t.close());

  const countPets = async () =>
    Number((await t.sql.query<{ count: string }>('SELECT count(*) FROM pets')).rows[0].count);

  const call = (
    route: (typeof ROUTES)[number],
    headers: Record<string, string> = {},
    options: { query?: string; body?: string } = {},
  ) =>
    request(t.origin, `${route.path}${options.query ?? ''}`, {
      method: route.method,
      headers: { ...(route.method === 'POST' ? { 'content-type': 'application/json' } : {}), ...headers },
      body: route.method === 'POST' ? (options.body ?? VALID_PET) : undefined,
    });

  function expectUnauthorized(response: ApiResponse, challenge: string, body: object) {
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(challenge);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual(body);
  }

  describe.each(ROUTES)('$name ($method $path)', (route) => {
    it(`answers ${route.ok} with a valid key`, async () => {
      expect((await call(route, { authorization: `Bearer ${TEST_KEY}` })).status).toBe(route.ok);
    });

    it.each([['bearer'], ['BEARER'], ['BeArEr']])('accepts the scheme written %s', async (scheme) => {
      expect((await call(route, { authorization: `${scheme} ${TEST_KEY}` })).status).toBe(route.ok);
    });

    it('answers a missing key with 401, the bare challenge and the Error body', async () => {
      expectUnauthorized(await call(route), CHALLENGE, MISSING_KEY);
    });

    it('answers a wrong key with 401 and error="invalid_token"', async () => {
      expectUnauthorized(
        await call(route, { authorization: 'Bearer wrong-key-0123456789abcdef' }),
        INVALID_TOKEN_CHALLENGE,
        INVALID_KEY,
      );
    });

    it('answers a valid key with one character changed as a wrong key', async () => {
      const altered = `${TEST_KEY.slice(0, -1)}${TEST_KEY.endsWith('f') ? 'e' : 'f'}`;

      expectUnauthorized(
        await call(route, { authorization: `Bearer ${altered}` }),
        INVALID_TOKEN_CHALLENGE,
        INVALID_KEY,
      );
    });

    it('refuses the Basic scheme, even carrying the key', async () => {
      const basic = Buffer.from(`user:${TEST_KEY}`).toString('base64');

      expectUnauthorized(await call(route, { authorization: `Basic ${basic}` }), CHALLENGE, MISSING_KEY);
    });

    it('refuses the key as a bare header value, without a scheme', async () => {
      expectUnauthorized(
        await call(route, { authorization: TEST_KEY }),
        'Bearer realm="animal-store", error="invalid_request"',
        {
          code: 'unauthorized',
          message: 'The Authorization header is malformed: use Bearer <key>.',
          status: 401,
        },
      );
    });

    it('refuses a valid key sent as access_token in the query string', async () => {
      expectUnauthorized(await call(route, {}, { query: `?access_token=${TEST_KEY}` }), CHALLENGE, MISSING_KEY);
    });

    it('answers access_token repeated in the query string with 401, never a 500', async () => {
      expectUnauthorized(
        await call(route, {}, { query: `?access_token=${TEST_KEY}&access_token=${TEST_KEY}` }),
        CHALLENGE,
        MISSING_KEY,
      );
    });

    it('answers access_token in bracket notation in the query string with 401, never a 500', async () => {
      expectUnauthorized(await call(route, {}, { query: `?access_token[key]=${TEST_KEY}` }), CHALLENGE, MISSING_KEY);
    });
  });

  describe('access_token in the JSON body (createPet)', () => {
    const createPet = ROUTES[1];

    it.each([
      ['a string', TEST_KEY],
      ['an array', [TEST_KEY, TEST_KEY]],
      ['an object', { key: TEST_KEY }],
    ])('refuses a key sent as %s with 401 and writes nothing', async (_case, accessToken) => {
      const before = await countPets();

      const response = await call(
        createPet,
        {},
        { body: JSON.stringify({ name: 'Rex', categoryId: 1, access_token: accessToken }) },
      );

      expectUnauthorized(response, CHALLENGE, MISSING_KEY);
      expect(await countPets()).toBe(before);
    });

    it('with a valid header, treats access_token as an unknown property (400)', async () => {
      const response = await call(
        createPet,
        { authorization: `Bearer ${TEST_KEY}` },
        { body: JSON.stringify({ name: 'Rex', categoryId: 1, access_token: 'other' }) },
      );

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        code: 'validation_failed',
        message: 'property access_token should not exist.',
        status: 400,
      });
    });
  });

  it('with a valid header, ignores access_token in the query string like any unknown parameter', async () => {
    const response = await call(ROUTES[0], { authorization: `Bearer ${TEST_KEY}` }, { query: '?access_token=other' });

    expect(response.status).toBe(200);
  });

  it('writes nothing when a create is refused for want of a valid key', async () => {
    const before = await countPets();

    await call(ROUTES[1]);
    await call(ROUTES[1], { authorization: 'Bearer wrong-key-0123456789abcdef' });

    expect(await countPets()).toBe(before);
  });

  it('checks the key before validating the body, so an unauthenticated caller learns nothing about it', async () => {
    const response = await call(ROUTES[1], {}, { body: JSON.stringify({ id: 5 }) });

    expectUnauthorized(response, CHALLENGE, MISSING_KEY);
  });

  it('accepts every key of API_KEYS', async () => {
    const other = await startTestApp({
      apiKeys: parseApiKeys('first-key-0123456789abcdef,second-key-0123456789abcdef'),
    });
    try {
      for (const key of ['first-key-0123456789abcdef', 'second-key-0123456789abcdef']) {
        const response = await request(other.origin, '/v1/pets', { headers: { authorization: `Bearer ${key}` } });
        expect(response.status).toBe(200);
      }
      const test = await request(other.origin, '/v1/pets', { headers: { authorization: `Bearer ${TEST_KEY}` } });
      expect(test.status).toBe(401);
    } finally {
      await other.close();
    }
  });
});
