import type { Pet } from '../src/pets/dto/pet.dto.js';
import { ApiResponse, auth, jsonBody, request, startTestApp, TestApp } from './support/test-app.js';

const MAX_SAFE = 9007199254740991;
const DEPRECATION_HEADERS = {
  deprecation: '@1795132800',
  sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  link: '</v1/pets>; rel="successor-version"',
};
const NAME_RULE = 'name must be a string of 1 to 255 characters, not only whitespace, without control characters.';
const CATEGORY_RULE = 'categoryId must be an integer from 1 to 9007199254740991.';
const STATUS_RULE = 'status must be one of available, pending, sold.';
const LIMIT_RULE = 'limit must be an integer from 1 to 100.';

describe('pets (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());
  beforeEach(() => t.sql.query('TRUNCATE pets RESTART IDENTITY'));

  const get = <T = unknown>(path: string) => request<T>(t.origin, path, { headers: auth() });
  const create = (body: unknown) => request<Pet>(t.origin, '/v1/pets', jsonBody(body));

  const storedRows = async () =>
    (
      await t.sql.query<{ id: string; name: string; category_id: string; status: string }>(
        'SELECT id::text, name, category_id::text, status FROM pets ORDER BY id',
      )
    ).rows;

  /** Rows inserted straight into the table with the ids given, in the order given. */
  async function seed(pets: { id: number; name?: string; status?: string }[]) {
    for (const pet of pets) {
      await t.sql.query(
        'INSERT INTO pets (id, name, category_id, status) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4)',
        [pet.id, pet.name ?? `pet-${pet.id}`, 1, pet.status ?? 'available'],
      );
    }
  }

  function expectValidationError(response: ApiResponse, message: string) {
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual({ code: 'validation_failed', message, status: 400 });
  }

  describe('GET /v1/pets', () => {
    it('orders by id ascending, not by insertion order or name, and ignores unknown query parameters', async () => {
      await seed([
        { id: 30, name: 'Alpha' },
        { id: 10, name: 'Charlie' },
        { id: 20, name: 'Bravo' },
      ]);

      const response = await get('/v1/pets?page=2&sort=name&limit=5');

      expect(response.status).toBe(200);
      expect(response.body).toEqual([
        { id: 10, name: 'Charlie', categoryId: 1, status: 'available' },
        { id: 20, name: 'Bravo', categoryId: 1, status: 'available' },
        { id: 30, name: 'Alpha', categoryId: 1, status: 'available' },
      ]);
    });

    it('answers [] when no animal matches, with or without a status', async () => {
      expect((await get('/v1/pets')).body).toEqual([]);
      await seed([{ id: 1, status: 'sold' }]);

      expect((await get('/v1/pets?status=pending')).body).toEqual([]);
      expect((await get('/v1/pets?status=sold')).body).toEqual([
        { id: 1, name: 'pet-1', categoryId: 1, status: 'sold' },
      ]);
    });

    it.each([
      ['limit=%205', LIMIT_RULE],
      ['limit=+5', LIMIT_RULE],
      ['limit=5&limit=6', LIMIT_RULE],
      ['status=lost', STATUS_RULE],
      ['status=sold&status=pending', STATUS_RULE],
    ])('rejects %s with 400', async (query, message) => {
      expectValidationError(await get(`/v1/pets?${query}`), message);
    });
  });

  describe('POST /v1/pets', () => {
    it('answers 201 with the stored animal, its id assigned and status defaulting to available', async () => {
      const response = await create({ name: 'Rex', categoryId: 3 });

      expect(response.status).toBe(201);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual({ id: 1, name: 'Rex', categoryId: 3, status: 'available' });
      expect(await storedRows()).toEqual([{ id: '1', name: 'Rex', category_id: '3', status: 'available' }]);
    });

    it.each([
      ['right-to-left script and CJK', 'قطة ねこ 猫'],
      ['combining marks, not normalised', 'Cafe\u0301'],
      ['surrounding and inner spaces', '  Rex   the  dog  '],
      ['255 astral characters', '🐶'.repeat(255)],
    ])('stores a name with %s exactly as sent', async (_case, name) => {
      const response = await create({ name, categoryId: 1 });

      expect(response.status).toBe(201);
      expect(response.body.name).toBe(name);
      expect((await storedRows())[0].name).toBe(name);
    });

    // Responses are serialised from route schemas taken from the OpenAPI document (src/openapi/response-schemas.ts).
    it('answers create, get and list byte for byte: escapes, non-ASCII, ids and categoryIds up to 2^53-1 as numbers', async () => {
      const created = await create({ name: 'Fé "Ω"', categoryId: MAX_SAFE, status: 'sold' });
      const fe = JSON.stringify({ id: 1, name: 'Fé "Ω"', categoryId: MAX_SAFE, status: 'sold' });
      expect(created.status).toBe(201);
      expect(created.text).toBe(fe);
      expect((await get('/v1/pets/1')).text).toBe(fe);
      expect((await storedRows())[0].category_id).toBe('9007199254740991');

      await t.sql.query(
        'INSERT INTO pets (id, name, category_id) OVERRIDING SYSTEM VALUE VALUES (9007199254740991, $1, 9007199254740991)',
        ['Big'],
      );
      const big = '{"id":9007199254740991,"name":"Big","categoryId":9007199254740991,"status":"available"}';
      expect((await get('/v1/pets')).text).toBe(`[${fe},${big}]`);
      expect((await get('/v1/pets?status=sold')).text).toBe(`[${fe}]`);
      expect((await get('/v1/pets/9007199254740991')).text).toBe(big);
    });

    describe('rejects with 400 and writes nothing', () => {
      afterEach(async () => {
        expect(await storedRows()).toEqual([]);
      });

      it.each<[string, unknown]>([
        ['NUL', 'Re\u0000x'],
        ['only non-breaking and em spaces', '\u00a0\u2003'],
        ['256 astral characters', '🐶'.repeat(256)],
        ['a lone high surrogate', 'Rex\ud83d'],
        ['the non-string 42', 42],
      ])('a name with %s', async (_case, name) => {
        expectValidationError(await create({ name, categoryId: 1 }), NAME_RULE);
      });

      it.each<[string, unknown, string]>([
        ['categoryId as the string "5"', { name: 'Rex', categoryId: '5' }, CATEGORY_RULE],
        [
          'categoryId written as 1e400, which JSON.parse makes Infinity',
          '{"name":"Rex","categoryId":1e400}',
          CATEGORY_RULE,
        ],
        ['no name', { categoryId: 1 }, NAME_RULE],
        ['nothing: an empty object, naming both required fields', {}, `${NAME_RULE.slice(0, -1)}; ${CATEGORY_RULE}`],
        ['the status "lost"', { name: 'Rex', categoryId: 1, status: 'lost' }, STATUS_RULE],
        ['an id, so no client chooses ids', { id: 99, name: 'Rex', categoryId: 1 }, 'property id should not exist.'],
        ['an unknown property', { name: 'Rex', categoryId: 1, colour: 'brown' }, 'property colour should not exist.'],
      ])('a body with %s', async (_case, body, message) => {
        expectValidationError(await create(body), message);
      });

      it.each([
        ['an array', '[{"name":"Rex","categoryId":1}]'],
        ['null', 'null'],
      ])('a body that is %s', async (_case, body) => {
        expectValidationError(await create(body), 'The request body must be a JSON object.');
      });
    });
  });

  describe('GET /v1/pets/{petId}', () => {
    const expectDeprecationHeaders = (response: ApiResponse) =>
      expect(
        Object.fromEntries(Object.keys(DEPRECATION_HEADERS).map((name) => [name, response.headers.get(name)])),
      ).toEqual(DEPRECATION_HEADERS);

    it('answers 200 with the animal and the deprecation headers', async () => {
      await seed([{ id: 7, name: 'Rex', status: 'pending' }]);

      const response = await get('/v1/pets/7');

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual({ id: 7, name: 'Rex', categoryId: 1, status: 'pending' });
      expectDeprecationHeaders(response);
    });

    it.each([['8'], ['9007199254740991']])(
      'answers the unknown id %s with 404 and the deprecation headers',
      async (id) => {
        await seed([{ id: 7 }]);

        const response = await get(`/v1/pets/${id}`);

        expect(response.status).toBe(404);
        expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(response.body).toEqual({ code: 'not_found', message: `No animal has id ${id}.`, status: 404 });
        expectDeprecationHeaders(response);
      },
    );

    it.each([
      ['a word', 'abc'],
      ['a leading plus', '%2B7'],
      ['a leading space', '%207'],
      ['a 100-character id', '1'.repeat(100)],
    ])('answers petId as %s with 400', async (_case, id) => {
      const response = await get(`/v1/pets/${id}`);

      expectValidationError(response, 'petId must be an integer from 1 to 9007199254740991.');
      expect(response.headers.get('deprecation')).toBe(DEPRECATION_HEADERS.deprecation);
    });

    it('answers an id longer than the router allows with 400, without echoing it', async () => {
      const id = '1'.repeat(101);

      const response = await get(`/v1/pets/${id}`);

      expectValidationError(response, 'A path parameter is longer than allowed.');
      expect(response.text).not.toContain(id);
    });
  });
});
