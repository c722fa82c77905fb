import { expect, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createApp } from '../src/app.setup.js';
import { parseApiKeys } from '../src/config/app-config.js';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { roleSessionTimeoutsSql, SESSION_TIMEOUTS } from '../src/database/session-timeouts.js';
import { databaseFault } from '../src/database/database-faults.js';
import { startTcpProxy } from '../dev/tcp-proxy.js';
import { TEST_KEY } from './support/test-app.js';
import { createTestDatabase, TestDatabase } from './support/test-database.js';
import { defaultConfig } from './support/config.js';

const QUERY_TIMEOUT_MS = (dataSourceOptions('postgres://x@127.0.0.1/x').extra as { query_timeout: number })
  .query_timeout;

/** The service's database settings, directly against PostgreSQL (test:system checks them through PgBouncer). */
describe("database timeouts, as the roles' setup makes them", () => {
  let database: TestDatabase;
  let roleUrl: string;
  let admin: pg.Client;
  const role = `app_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    // An ordinary role, as in production: it may alter only its own settings.
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app-password'`);
    await admin.query(`GRANT ALL ON SCHEMA public TO ${role}`);
    roleUrl = Object.assign(new URL(database.url), { username: role, password: 'app-password' }).toString();
  });

  afterAll(async () => {
    // Its settings and grants in this database go with it.
    await admin?.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
    await admin?.end();
    await database?.drop();
  });

  describe('at start, the service only reads its session timeouts', () => {
    const databaseName = () => new URL(database.url).pathname.slice(1);
    /** The role settings of this database, with the row versions: a rewrite of the same values changes xmin. */
    const roleSettings = async () =>
      (
        await admin.query<{ role: string; config: string; version: string }>(
          `SELECT s.setrole::regrole::text AS role, s.setconfig::text AS config, s.xmin::text AS version
           FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
           WHERE d.datname = current_database() ORDER BY 1`,
        )
      ).rows;
    const startAndStop = async () => {
      const config = { ...defaultConfig(roleUrl), apiKeys: parseApiKeys(TEST_KEY) };
      await (await createApp({ ...config, migrationsRun: false }, false)).close();
    };
    let warn: jest.Spied<Logger['warn']>;
    const warnings = () =>
      warn.mock.calls.filter(([message]) => String(message).includes('without a statement timeout'));
    beforeEach(() => {
      warn = jest.spyOn(Logger.prototype, 'warn');
    });
    afterEach(() => warn.mockRestore());

    it('a role without them: two starts write nothing to pg_db_role_setting, and each warns once, naming the fix', async () => {
      const before = await roleSettings();
      await startAndStop();
      await startAndStop();
      expect(await roleSettings()).toEqual(before);
      expect(before.map((row) => row.role)).not.toContain(role);
      expect(warnings()).toHaveLength(2);
      expect(String(warnings()[0][0])).toContain(
        `ALTER ROLE <role> IN DATABASE "<database>" SET statement_timeout = ${SESSION_TIMEOUTS.statement_timeout};`,
      );
    }, 60_000);

    it('a role given them where it is made: every new session has them, and a restart neither rewrites nor warns', async () => {
      // What compose/roles.sh does for animal_store_api, from the same values.
      await admin.query(roleSessionTimeoutsSql(databaseName(), role));
      const made = await roleSettings();
      expect(made.find((row) => row.role === role)?.config).toBe(
        `{${Object.entries(SESSION_TIMEOUTS)
          .map(([name, ms]) => `${name}=${ms}`)
          .join(',')}}`,
      );
      await startAndStop();
      await startAndStop();
      expect(await roleSettings()).toEqual(made);
      expect(warnings()).toHaveLength(0);

      const session = new pg.Client({ connectionString: roleUrl });
      await session.connect();
      try {
        for (const [name, ms] of Object.entries(SESSION_TIMEOUTS)) {
          expect((await session.query<Record<string, string>>(`SHOW ${name}`)).rows[0][name]).toBe(`${ms / 1000}s`);
        }
        const slow = await session
          .query(`SELECT pg_sleep(${SESSION_TIMEOUTS.statement_timeout / 1000 + 2})`)
          .catch((e: unknown) => e);
        expect(slow).toMatchObject({ code: '57014' });
        expect(databaseFault(slow)).toMatchObject({ code: '57014' });
      } finally {
        await session.end();
      }
    }, 60_000);
  });

  it('a server gone silent: the query fails soon after query_timeout, as "database unavailable", and the pool drops the connection', async () => {
    const proxy = await startTcpProxy(Number(new URL(database.url).port));
    const url = Object.assign(new URL(roleUrl), { port: String(proxy.port) }).toString();
    const pool = new pg.Pool({ ...(dataSourceOptions(url).extra as pg.PoolConfig), connectionString: url });
    pool.on('error', () => undefined);
    try {
      await pool.query('SELECT 1');
      proxy.stall();
      const started = Date.now();
      const error = await pool.query('SELECT 1').catch((failure: unknown) => failure);
      const elapsed = Date.now() - started;
      expect(error).toMatchObject({ message: 'Query read timeout' });
      expect(databaseFault(error)).toMatchObject({ sqlClass: '08' });
      expect(elapsed).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS);
      expect(elapsed).toBeLessThan(QUERY_TIMEOUT_MS + 2_000);
      expect(pool.totalCount).toBe(0);
    } finally {
      proxy.forward();
      await pool.end();
      await proxy.close();
    }
  }, 30_000);
});
