import { randomBytes } from 'node:crypto';
import { PURGE_BATCH_ROWS, IdempotencyPurgeService } from '../src/pets/idempotency/idempotency-purge.service.js';
import { ApiKeysRepository } from '../src/auth/api-keys/api-keys.repository.js';
import { LAST_USED_INTERVAL_MS } from '../src/auth/api-keys/last-used-recorder.js';
import { Database } from '../src/database/database.js';
import { EmbeddedServer, startEmbeddedServer } from './support/database-server.js';
import { expectRateLimited } from './support/expect-rate-limited.js';
import { auth, request, TEST_KEY, TestApp } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';
import { pollUntil } from './support/poll.js';
import { terminateServiceSessions } from './support/test-database.js';

const randomIssuedKey = () => `pet_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;

/** A server of this file's own, which records every statement (pg_stat_statements). */
let server: EmbeddedServer;
beforeAll(async () => {
  server = await startEmbeddedServer({ flags: ['-c', 'shared_preload_libraries=pg_stat_statements'] });
}, 60_000);
afterAll(() => server?.stop());

async function statementsOn(t: TestApp, pattern: string) {
  const { rows } = await t.sql.query<{ query: string; calls: string; rows: string }>(
    `SELECT query, calls, rows FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query ILIKE $1`,
    [pattern],
  );
  return rows.map((row) => ({ query: row.query, calls: Number(row.calls), rows: Number(row.rows) }));
}

describe('an address past its failed-authentication budget, with many issued keys', () => {
  const BUDGET = 3;
  const SEEDED_KEYS = 1_000;
  const expiredKey = randomIssuedKey();
  const t = testAppPerBlock({ authFailureLimitPerMinute: BUDGET }, () => ({ adminUrl: server.adminUrl }));
  beforeAll(async () => {
    await t.sql.query('CREATE EXTENSION pg_stat_statements');
    await t.sql.query(
      `INSERT INTO api_keys (name, prefix, digest)
       SELECT 'seeded ' || n, 'pet_seeded', encode(sha256(('seeded ' || n)::bytea), 'hex') FROM generate_series(1, $1) n`,
      [SEEDED_KEYS],
    );
    await t.sql.query(
      `INSERT INTO api_keys (name, prefix, digest, expires_at)
       VALUES ('expired', left($1, 12), encode(sha256(convert_to($1, 'UTF8')), 'hex'), now() - interval '1 minute')`,
      [expiredKey],
    );
  }, 60_000);

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

    const rows = await statementsOn(t, '%api_keys%');
    // Each statement on the table found at most the one key it was asked about.
    const readMore = rows
      .filter((statement) => statement.rows > statement.calls)
      .map((statement) => `${statement.rows} rows in ${statement.calls} calls: ${statement.query}`);
    expect(readMore).toEqual([]);
    expect(rows.every((statement) => /WHERE digest = \$1/.test(statement.query))).toBe(true);
    // At most the budget's worth of lookups for the wrong keys, plus the expired one.
    expect(rows.reduce((sum, statement) => sum + statement.calls, 0)).toBeLessThanOrEqual(BUDGET + 1);
  });
});

describe('one app on many issued keys: the expiring-keys gauge and last-used writes', () => {
  const t = testAppPerBlock(undefined, () => ({ adminUrl: server.adminUrl }));
  beforeAll(async () => {
    await t.sql.query(
      // Issued 30 days ago: lineages short-lived on purpose are not counted, and these are not.
      `INSERT INTO api_keys (name, prefix, digest, created_at, expires_at)
       SELECT 'seeded ' || n, 'pet_seeded', encode(sha256(('seeded ' || n)::bytea), 'hex'), now() - interval '30 days',
              now() + n * interval '1 hour'
         FROM generate_series(1, 10000) n`,
    );
    await t.sql.query('ANALYZE api_keys');
  }, 60_000);

  it('counts the keys expiring soon from an index, never by reading every key', async () => {
    const gauge = /^animal_store_api_keys_expiring_soon 168$/m;
    await pollUntil(async () => gauge.test((await request(t.origin, '/metrics')).text), {
      what: 'the gauge to count the keys expiring within 7 days',
    });
    // Only the gauge's count can use this index; the server reports its use within seconds.
    const scans = `SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'api_keys_live_expires_at_idx'`;
    await pollUntil(async () => Number((await t.sql.query<{ idx_scan: string }>(scans)).rows[0]?.idx_scan ?? 0) > 0, {
      what: 'the count to use api_keys_live_expires_at_idx',
      timeoutMs: 30_000,
    });
  }, 60_000);

  it('writes a key’s last use at most once per interval, whatever the process asks', async () => {
    const keys = t.app.get(ApiKeysRepository);
    const version = async () =>
      (await t.sql.query<{ xmin: string; at: Date }>('SELECT xmin, last_used_at AS at FROM api_keys WHERE id = 1'))
        .rows[0];
    const first = new Date();
    await keys.touch(['1'], first, LAST_USED_INTERVAL_MS);
    const written = await version();
    expect(written.at).toEqual(first);

    await keys.touch(['1'], new Date(first.getTime() + LAST_USED_INTERVAL_MS - 1), LAST_USED_INTERVAL_MS);
    expect(await version()).toEqual(written);

    const next = new Date(first.getTime() + LAST_USED_INTERVAL_MS);
    await keys.touch(['1'], next, LAST_USED_INTERVAL_MS);
    expect((await version()).at).toEqual(next);
  });

  describe('then the idempotency purge, with a backlog of several batches', () => {
    const EXPIRED_ROWS = Math.round(3.5 * PURGE_BATCH_ROWS);
    beforeAll(async () => {
      await t.sql.query('CREATE EXTENSION pg_stat_statements');
      await t.sql.query(
        `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_fingerprint, created_at)
       SELECT 'env-1', 'expired-' || n, 'x', now() - interval '25 hours' - n * interval '1 ms'
         FROM generate_series(1, $1) n`,
        [EXPIRED_ROWS],
      );
      await t.sql.query(
        `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_fingerprint, created_at)
       VALUES ('env-1', 'young', 'x', now() - interval '23 hours')`,
      );
      await t.sql.query('ANALYZE idempotency_keys');
      // The service's sessions start again under a 1 s statement timeout (the role's setting in this database).
      const { rows } = await t.sql.query<{ name: string }>('SELECT current_database() AS name');
      await t.sql.query(`ALTER ROLE current_user IN DATABASE ${rows[0].name} SET statement_timeout = '1s'`);
      await terminateServiceSessions(t.sql);
      await pollUntil(() => t.app.get(Database).pool.totalCount === 0, { what: 'the pool to drop its sessions' });
      await t.sql.query('SELECT pg_stat_statements_reset()');
    }, 60_000);

    it('deletes every expired key in batches, each under a 1 s statement timeout, and keeps the young one', async () => {
      await t.app.get(IdempotencyPurgeService).purge();

      const { rows } = await t.sql.query<{ idempotency_key: string }>('SELECT idempotency_key FROM idempotency_keys');
      expect(rows).toEqual([{ idempotency_key: 'young' }]);
      const deletes = await statementsOn(t, 'DELETE FROM idempotency_keys%');
      expect(deletes).toHaveLength(1);
      expect(deletes[0].rows).toBe(EXPIRED_ROWS);
      expect(deletes[0].calls).toBe(Math.ceil(EXPIRED_ROWS / PURGE_BATCH_ROWS));
      const metrics = (await request(t.origin, '/metrics')).text;
      expect(metrics).toMatch(/^animal_store_idempotency_purge_failures_total 0$/m);
      const age = Number(/^animal_store_idempotency_oldest_key_age_seconds (\S+)$/m.exec(metrics)?.[1]);
      expect(age).toBeGreaterThanOrEqual(23 * 3600);
      expect(age).toBeLessThan(24 * 3600);
    });
  });
});
