import { createHash, randomBytes } from 'node:crypto';
import { EmbeddedServer, startEmbeddedServer } from './support/database-server.js';
import { expectRateLimited } from './support/expect-rate-limited.js';
import { auth, request, startTestApp, TEST_KEY, TestApp } from './support/test-app.js';

const randomIssuedKey = () => `pet_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;
const digestOf = (key: string) => createHash('sha256').update(key).digest('hex');

describe('an address past its failed-authentication budget, with many issued keys', () => {
  const BUDGET = 3;
  const SEEDED_KEYS = 1_000;
  const expiredKey = randomIssuedKey();
  let server: EmbeddedServer;
  let t: TestApp;
  beforeAll(async () => {
    server = await startEmbeddedServer({ flags: ['-c', 'shared_preload_libraries=pg_stat_statements'] });
    t = await startTestApp({ authFailureLimitPerMinute: BUDGET }, { adminUrl: server.adminUrl });
    await t.sql.query('CREATE EXTENSION pg_stat_statements');
    await t.sql.query(
      `INSERT INTO api_keys (name, prefix, digest)
       SELECT 'seeded ' || n, 'pet_seeded', encode(sha256(('seeded ' || n)::bytea), 'hex') FROM generate_series(1, $1) n`,
      [SEEDED_KEYS],
    );
    await t.sql.query(
      `INSERT INTO api_keys (name, prefix, digest, expires_at) VALUES ('expired', $1, $2, now() - interval '1 minute')`,
      [expiredKey.slice(0, 12), digestOf(expiredKey)],
    );
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await server?.stop();
  });

  it('answers from lookups by digest, never a read of the whole keys table; an expired key keeps its 401', async () => {
    const expired = {
      code: 'unauthorized',
      message: 'The API key has expired: use the key that replaced it, or ask for a new one.',
      status: 401,
    };
    // Its client calls before and after the address goes over its budget.
    expect((await request(t.origin, '/v1/pets', { headers: auth(expiredKey) })).body).toEqual(expired);
    for (let i = 0; i < BUDGET; i += 1) await request(t.origin, '/v1/pets', { headers: auth(randomIssuedKey()) });
    await t.sql.query('SELECT pg_stat_statements_reset()');

    for (let i = 0; i < 20; i += 1) {
      expectRateLimited(await request(t.origin, '/v1/pets', { headers: auth(randomIssuedKey()) }), BUDGET);
    }
    const answer = await request(t.origin, '/v1/pets', { headers: auth(expiredKey) });
    expect([answer.status, answer.body]).toEqual([401, expired]);
    expect((await request(t.origin, '/v1/pets', { headers: auth(TEST_KEY) })).status).toBe(200);

    const { rows } = await t.sql.query<{ query: string; calls: string; rows: string }>(
      `SELECT query, calls, rows FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query ILIKE '%api_keys%'`,
    );
    // Each statement on the table found at most the one key it was asked about.
    const readMore = rows
      .filter((statement) => Number(statement.rows) > Number(statement.calls))
      .map((statement) => `${statement.rows} rows in ${statement.calls} calls: ${statement.query}`);
    expect(readMore).toEqual([]);
    expect(rows.every((statement) => /WHERE digest = \$1/.test(statement.query))).toBe(true);
    // At most the budget's worth of lookups for the wrong keys, plus the expired one.
    expect(rows.reduce((sum, statement) => sum + Number(statement.calls), 0)).toBeLessThanOrEqual(BUDGET + 1);
  });
});
