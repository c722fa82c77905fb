import { expect } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import { commandDataSourceOptions } from '../src/database/data-source-options.js';
import { MigrationLockTimeoutError, runMigrations } from '../src/database/run-migrations.js';
import { SESSION_TIMEOUTS } from '../src/database/session-timeouts.js';
import { buildCopyWith, ensureBuilt, ExtraMigration, ROOT, run } from './support/built-service.js';
import { applied, migrationRun, openTransaction } from './support/database-migrations.js';
import { ServiceProcess, startService } from './support/service-process.js';
import { auth, request, startTestApp, TestApp } from './support/test-app.js';
import { createTestDatabase, TestDatabase } from './support/test-database.js';

/** Past the pool's client-side query bound, itself past a request's statement bound: each would cut it short. */
const SLOW_SECONDS = SESSION_TIMEOUTS.statement_timeout / 1000 + 2;
const SLOW: ExtraMigration = { name: 'SlowBackfill', sql: `SELECT pg_sleep(${SLOW_SECONDS})` };
const ADD_NOTE: ExtraMigration = { name: 'AddPetNote', sql: 'ALTER TABLE "pets" ADD "note" text' };
const LOCK_TIMEOUT_MS = 1_000;

/** Migrations through every path, on a database whose one role has the requests' bounds (as its setup makes them). */
describe("migrations are bounded by their own settings, not the requests'", () => {
  let t: TestApp;
  let slow: Awaited<ReturnType<typeof buildCopyWith>>;
  let withNote: Awaited<ReturnType<typeof buildCopyWith>>;
  let database: TestDatabase;
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    await ensureBuilt();
    [slow, withNote] = await Promise.all([buildCopyWith([SLOW]), buildCopyWith([SLOW, ADD_NOTE])]);
    // One role serves and migrates here: it carries the requests' statement_timeout in this database.
    t = await startTestApp();
  }, 300_000);

  afterAll(async () => {
    for (const service of services) service.kill('SIGKILL');
    await Promise.allSettled(services.map((service) => service.exited));
    await Promise.allSettled([t?.close(), slow?.remove(), withNote?.remove(), database?.drop()]);
  }, 30_000);

  /** What the service would write into the checkout (its default DATA_DIR), ignored files included. */
  const checkoutData = () =>
    execFileSync('git', ['status', '--porcelain', '--ignored', '--untracked-files=all', '--', '.data'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });

  it(`applies a ${SLOW_SECONDS} s migration as a role with the requests' bounds: by migration:run, and by MIGRATIONS_RUN at a start after the service has run, writing nothing into the checkout`, async () => {
    const { rows } = await t.sql.query<{ statement_timeout: string }>('SHOW statement_timeout');
    expect(rows[0].statement_timeout).toBe(`${SESSION_TIMEOUTS.statement_timeout / 1000}s`);

    // Both at once, on two databases: each waits out the slow migration.
    const byCommand = (async () => {
      const started = Date.now();
      const finished = await migrationRun(slow.root, t.database.url);
      return { finished, elapsed: Date.now() - started };
    })();
    const checkoutBefore = checkoutData();
    database = await createTestDatabase();
    const env = { DATABASE_URL: database.url, MIGRATIONS_RUN: 'true', LOG_LEVEL: 'warn' };
    const first = await startService(env);
    services.push(first);
    first.kill('SIGTERM');
    await first.exited;
    services.push(await startService(env, { main: join(slow.root, 'dist', 'src', 'main.js'), cwd: slow.root }));
    const sql = new Client({ connectionString: database.url });
    await sql.connect();
    try {
      expect(await applied(sql)).toContain('SlowBackfill1795500000000');
    } finally {
      await sql.end();
    }
    expect(checkoutData()).toBe(checkoutBefore);

    const { finished, elapsed } = await byCommand;
    expect(finished).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^Applied SlowBackfill1795500000000 on /),
    });
    expect(elapsed).toBeGreaterThanOrEqual(SLOW_SECONDS * 1000);
    expect(await applied(t.sql)).toContain('SlowBackfill1795500000000');
  }, 90_000);

  it('behind a lock another session holds on "pets", a migration stops within MIGRATION_LOCK_TIMEOUT_MS naming the table, by runMigrations, migration:run and at start (run once, the service stopping: only connecting is retried); a request gets 503; the holder goes on', async () => {
    const holder = await openTransaction(t.database.url, 'BEGIN', 'LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
    try {
      const request503 = (async () => {
        const started = Date.now();
        const response = await request(t.origin, '/v1/pets', { headers: auth() });
        return { response, elapsed: Date.now() - started };
      })();

      class AddPetNote1795500000001 {
        name = 'AddPetNote1795500000001';
        up = (queryRunner: QueryRunner) => queryRunner.query(ADD_NOTE.sql);
        async down() {}
      }
      const options = commandDataSourceOptions(t.database.url);
      const dataSource = await new DataSource({ ...options, migrations: [AddPetNote1795500000001] }).initialize();
      let error: unknown;
      const started = Date.now();
      try {
        error = await runMigrations(dataSource, { migrationLockTimeoutMs: LOCK_TIMEOUT_MS }).catch((e: unknown) => e);
      } finally {
        await dataSource.destroy();
      }
      const waited = Date.now() - started;
      expect(error).toBeInstanceOf(MigrationLockTimeoutError);
      expect((error as Error).message).toMatch(
        /^waited 1000 ms \(MIGRATION_LOCK_TIMEOUT_MS\) for a lock on "pets", held by another session, at `ALTER TABLE "pets" ADD "note" text`; nothing was applied\. Let the sessions holding it finish or end them \(find them: SELECT .+\), then run the migrations again; /,
      );
      expect(waited).toBeGreaterThanOrEqual(LOCK_TIMEOUT_MS);
      expect(waited).toBeLessThan(LOCK_TIMEOUT_MS + 1_500);

      const env = { MIGRATION_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS) };
      expect(await migrationRun(withNote.root, t.database.url, env)).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(
          /^migration failed: waited 1000 ms \(MIGRATION_LOCK_TIMEOUT_MS\) for a lock on "pets"/,
        ),
      });
      const startEnv = { ...env, DATABASE_URL: t.database.url, MIGRATIONS_RUN: 'true', LOG_LEVEL: 'info' };
      const main = [join(withNote.root, 'dist', 'src', 'main.js')];
      const failed = await run(process.execPath, main, { ...startEnv, PATH: process.env.PATH ?? '' }, 60_000, {
        cwd: withNote.root,
      });
      const output = failed.stdout + failed.stderr;
      expect(failed.code).toBe(1);
      // Connecting is retried (TypeORM logs "Retrying" each time); the migration's failure is not.
      expect(
        output.match(/\[Bootstrap\][^\n]*waited 1000 ms \(MIGRATION_LOCK_TIMEOUT_MS\) for a lock on "pets"/g),
      ).toHaveLength(1);
      expect(output).not.toMatch(/Retrying/);

      const { response, elapsed } = await request503;
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(elapsed).toBeGreaterThanOrEqual(SESSION_TIMEOUTS.statement_timeout);
      expect(elapsed).toBeLessThan(SESSION_TIMEOUTS.statement_timeout + 2_000);

      // The lock holder's transaction was never disturbed: an aborted one would answer COMMIT with ROLLBACK.
      expect((await holder.query('COMMIT')).command).toBe('COMMIT');
    } finally {
      await holder.end();
    }
    expect(await applied(t.sql)).not.toContain('AddPetNote1795500000001');
  }, 120_000);
});
