import { expect } from '@jest/globals';
import type { Client } from 'pg';
import type { Pet } from '../src/pets/dto/pet.dto.js';
import { PetStatus } from '../src/pets/pet-status.enum.js';
import { pageStatement, PetPageQuery } from '../src/pets/pets.repository.js';
import { ApiResponse, auth, jsonBody, request, startTestApp, TestApp } from './support/test-app.js';

async function storedIds(sql: Client, status: PetStatus | null = null): Promise<number[]> {
  const where = 'WHERE $1::text IS NULL OR status = $1';
  const { rows } = await sql.query<{ id: string }>(`SELECT id FROM pets ${where} ORDER BY id`, [status]);
  return rows.map((row) => Number(row.id));
}

/** The target of `Link: <…>; rel="next"`, or undefined when the header is absent. */
function nextLink(response: ApiResponse): string | undefined {
  const link = response.headers.get('link');
  if (link === null) return undefined;
  const match = /^<(\/v1\/pets\?[^>]*)>; rel="next"$/.exec(link);
  if (!match) throw new Error(`Unexpected Link header: ${link}`);
  return match[1];
}

const cursorOf = (path: string) => new URLSearchParams(path.split('?')[1]).get('cursor')!;

/** Follows `next` links from `path` to the last page, running `alongside` with each page request. */
async function walk(origin: string, path: string, alongside: () => Promise<unknown> = () => Promise.resolve()) {
  const result: { pages: Pet[][]; links: string[] } = { pages: [], links: [] };
  let next: string | undefined = path;
  for (let page = 0; next !== undefined; page += 1) {
    if (page === 500) throw new Error('More than 500 pages: the walk does not end');
    const [response] = await Promise.all([request<Pet[]>(origin, next, { headers: auth() }), alongside()]);
    expect(response.status).toBe(200);
    result.pages.push(response.body);
    next = nextLink(response);
    if (next !== undefined) result.links.push(next);
  }
  return result;
}

const ids = (pages: Pet[][]) => pages.flat().map((pet) => pet.id);

describe('keyset pagination of GET /v1/pets', () => {
  let t: TestApp;
  let all: number[];

  beforeAll(async () => {
    t = await startTestApp();
    // Statuses cycle available, pending, sold.
    await t.sql.query(`INSERT INTO pets (name, category_id, status)
      SELECT 'pet-' || g, 1 + g % 5, (ARRAY['available', 'pending', 'sold'])[1 + g % 3] FROM generate_series(1, 250) g`);
    all = await storedIds(t.sql);
  });
  afterAll(() => t.close());

  const get = (path: string) => request<Pet[]>(t.origin, path, { headers: auth() });

  // At limit 50 the last page is exactly full, and still carries no link.
  it.each([7, 50])(
    'walks all 250 animals at limit %d: each once, in id order, full pages, no link on the last',
    async (limit) => {
      const { pages, links } = await walk(t.origin, `/v1/pets?limit=${limit}`);

      expect(all).toHaveLength(250);
      expect(ids(pages)).toEqual(all);
      expect(pages.map((page) => page.length)).toEqual(
        Array.from({ length: Math.ceil(250 / limit) }, (_, i) => Math.min(limit, 250 - i * limit)),
      );
      expect(links).toHaveLength(pages.length - 1);
      for (const link of links) expect(link).toMatch(new RegExp(`^/v1/pets\\?limit=${limit}&cursor=[A-Za-z0-9_-]+$`));
    },
  );

  it('carries the status filter and the limit over to every next link', async () => {
    for (const status of Object.values(PetStatus)) {
      const { pages, links } = await walk(t.origin, `/v1/pets?status=${status}&limit=7`);
      expect(ids(pages)).toEqual(await storedIds(t.sql, status));
      expect(pages.flat().every((pet) => pet.status === status)).toBe(true);
      for (const link of links)
        expect(link).toMatch(new RegExp(`^/v1/pets\\?limit=7&status=${status}&cursor=[A-Za-z0-9_-]+$`));
    }
  });

  it('puts the default limit in the link, and none when everything fits; limit=1 and limit=100 give that many', async () => {
    const first = await get('/v1/pets');
    expect(first.body).toHaveLength(20);
    expect(nextLink(first)).toMatch(/^\/v1\/pets\?limit=20&cursor=/);
    const sold = await get(`/v1/pets?status=${PetStatus.Sold}&limit=100`);
    expect(sold.body).toHaveLength(83);
    expect(nextLink(sold)).toBeUndefined();
    expect(ids([(await get('/v1/pets?limit=1')).body])).toEqual(all.slice(0, 1));
    expect(ids([(await get('/v1/pets?limit=100')).body])).toEqual(all.slice(0, 100));
  });

  it('accepts a cursor with another limit, which only changes the page size, and refuses it repeated', async () => {
    const cursor = cursorOf(nextLink(await get('/v1/pets?limit=7'))!);
    const response = await get(`/v1/pets?limit=3&cursor=${cursor}`);
    expect(response.body.map((pet) => pet.id)).toEqual(all.slice(7, 10));
    expect(nextLink(response)).toMatch(/^\/v1\/pets\?limit=3&cursor=/);
    const repeated = await get(`/v1/pets?cursor=${cursor}&cursor=${cursor}`);
    expect(repeated.status).toBe(400);
    expect(repeated.body).toMatchObject({ code: 'validation_failed', status: 400 });
  });

  // Last: it adds animals.
  it('visits every animal that existed before the walk exactly once, in order, while other clients add animals', async () => {
    const before = await storedIds(t.sql);
    let created = 0;
    const addAnimals = () =>
      Promise.all(
        Object.values(PetStatus).map(async (status) => {
          const response = await request(
            t.origin,
            '/v1/pets',
            jsonBody({ name: `late-${created}`, categoryId: 1, status }),
          );
          expect(response.status).toBe(201);
          created += 1;
        }),
      );

    const visited = ids((await walk(t.origin, '/v1/pets?limit=7', addAnimals)).pages);

    expect(created).toBeGreaterThanOrEqual(3 * Math.ceil(250 / 7));
    for (let i = 1; i < visited.length; i += 1) expect(visited[i]).toBeGreaterThan(visited[i - 1]);
    expect(visited.filter((id) => id <= before.at(-1)!)).toEqual(before);
  });
});

describe('the page queries on a realistic table', () => {
  const ROWS = 200_000;
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    // Like a store that has been running for years: the oldest four fifths are nearly all sold,
    // recent animals are spread over the three statuses.
    await t.sql.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'pet-' || g, 1 + g % 5,
              CASE WHEN g <= $1 * 0.8 AND g % 50 <> 0 THEN 'sold' ELSE (ARRAY['available', 'pending', 'sold'])[1 + g % 3] END
       FROM generate_series(1, $1) AS g`,
      [ROWS],
    );
    await t.sql.query('VACUUM ANALYZE pets');
  });
  afterAll(() => t.close());

  type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };
  /** Every node of a plan, depth first. */
  const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

  /** The repository's page statement as executed, so that "Rows Removed by Filter" would show rows read and thrown away. */
  async function explain(query: PetPageQuery, options = 'ANALYZE') {
    const [statement, parameters] = pageStatement(query);
    const { rows } = await t.sql.query<{
      'QUERY PLAN': { Plan: PlanNode; Planning: { 'Shared Hit Blocks': number } }[];
    }>(`EXPLAIN (${options}, FORMAT JSON) ${statement.text}`, parameters);
    return rows[0]['QUERY PLAN'][0];
  }

  async function expectIndexRangeScan(query: PetPageQuery, index: string, rows: number) {
    const plan = nodes((await explain(query)).Plan);
    expect(plan).toContainEqual(
      expect.objectContaining({ 'Node Type': 'Index Scan', 'Index Name': index, 'Actual Rows': rows }),
    );
    const types = plan.map((node) => node['Node Type']);
    expect(types).not.toContain('Seq Scan');
    expect(types).not.toContain('Sort');
    expect(plan.filter((node) => 'Filter' in node)).toEqual([]);
  }

  it.each([0, ROWS / 2, ROWS - 100])(
    'without status, the page after id %d is a primary-key range scan',
    async (after) => {
      await expectIndexRangeScan({ after, limit: 20 }, 'pets_pkey', 21);
    },
  );

  it('plans the first page without reading the primary key for its lowest id', async () => {
    const planningBuffers = async () =>
      (await explain({ after: 0, limit: 20 }, 'ANALYZE, BUFFERS')).Planning['Shared Hit Blocks'];
    await planningBuffers(); // the session's catalogue caches
    expect(await planningBuffers()).toBe(0);
  });

  it.each(
    Object.values(PetStatus).flatMap((status) => [0, ROWS / 2, ROWS - 1_000].map((after) => [status, after] as const)),
  )('with status=%s, the page after id %d is a (status, id) range scan', async (status, after) => {
    await expectIndexRangeScan({ status, after, limit: 20 }, 'pets_status_id_idx', 21);
  });
});
