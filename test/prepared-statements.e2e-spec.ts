import { expect } from '@jest/globals';
import { Database } from '../src/database/database.js';
import { auth, jsonBody, request, startTestApp, type TestApp } from './support/test-app.js';

/** One pooled connection, so that the statements its session prepared are the ones the test reads. */
const ONE_CONNECTION = { max: 1, idleTimeoutMs: 600_000 };

/** Every route whose statements are named: two creates, one with an Idempotency-Key sent twice, get by id three
 * times, and the three kinds of page. */
async function everyRoute(t: TestApp): Promise<number[]> {
  const create = (headers: Record<string, string> = {}) => {
    const body = jsonBody({ name: 'Rex', categoryId: 1 });
    return request<{ id: number }>(t.origin, '/v1/pets', { ...body, headers: { ...body.headers, ...headers } });
  };
  const [first, second] = [await create(), await create()];
  const retried = [await create({ 'idempotency-key': 'once' }), await create({ 'idempotency-key': 'once' })];
  const get = (path: string) => request(t.origin, path, { headers: auth() });
  const reads = [await get('/v1/pets?limit=1')];
  const [, next] = /^<(\/v1\/pets\?[^>]*)>; rel="next"$/.exec(reads[0].headers.get('link') ?? '') ?? [];
  const byId = `/v1/pets/${second.body.id}`;
  for (const path of [next, byId, byId, byId, '/v1/pets?limit=1&status=available']) reads.push(await get(path));
  return [first, second, ...retried, ...reads].map((answer) => answer.status);
}

const ANSWERED = [201, 201, 201, 201, 200, 200, 200, 200, 200, 200];

/** The named statements prepared on the connection's session, with how many times each ran. */
const prepared = (t: TestApp) =>
  t.app
    .get(Database)
    .query<{ name: string; calls: number }[]>(
      'SELECT name, (generic_plans + custom_plans)::int AS calls FROM pg_prepared_statements ORDER BY name',
    );

describe('the statements the routes run over and over (DATABASE_PREPARED_STATEMENTS)', () => {
  let t: TestApp | undefined;
  afterEach(() => t?.close());

  it.each([
    [
      'are prepared once per connection and then run by name, by default',
      {},
      [
        // The Idempotency-Key's first create claims it and stores its answer; the second finds that answer.
        { name: 'idempotency-claim', calls: 2 },
        { name: 'idempotency-find', calls: 1 },
        { name: 'idempotency-save-response', calls: 1 },
        { name: 'pets-by-id', calls: 3 },
        { name: 'pets-first-page', calls: 1 },
        { name: 'pets-insert', calls: 3 },
        { name: 'pets-page', calls: 1 },
        { name: 'pets-page-by-status', calls: 1 },
      ],
    ],
    [
      'are sent unnamed when it is false (PgBouncer before 1.21), with the same answers',
      { preparedStatements: false },
      [],
    ],
  ])('%s', async (_case, setting, named) => {
    t = await startTestApp({ databasePool: ONE_CONNECTION, ...setting });
    expect(await everyRoute(t)).toEqual(ANSWERED);
    expect(await prepared(t)).toEqual(named);
  });
});
