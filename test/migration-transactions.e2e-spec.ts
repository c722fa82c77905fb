import { expect } from '@jest/globals';
import { setTimeout as pause } from 'node:timers/promises';
import { Client } from 'pg';
import { DataSource, MigrationInterface, QueryRunner } from 'typeorm';
import { MIGRATIONS } from '../migrations/index.js';
import { commandDataSourceOptions } from '../src/database/data-source-options.js';
import { MigrationLockTimeoutError, revertLastMigration, runMigrations } from '../src/database/run-migrations.js';
import { buildCopyWith, ensureBuilt, Finished } from './support/built-service.js';
import { applied, migrationRun, openTransaction } from './support/database-migrations.js';
import { pollUntil } from './support/poll.js';
import { auth, jsonBody, request, startTestApp, TestApp } from './support/test-app.js';
import { createTestDatabase, TestDatabase } from './support/test-database.js';

/** Long enough to look at the database and answer a request while the migration runs. */
const SLOW_SECONDS = 6;

async function sessionRunning(sql: Client, fragment: string): Promise<number | null> {
  const { rows } = await sql.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() AND query LIKE $1`,
    [`%${fragment}%`],
  );
  return rows[0]?.pid ?? null;
}

/** A transaction whose snapshot is older than anything started after it: a concurrent index build waits for it. */
const olderSnapshot = (databaseUrl: string) =>
  openTransaction(databaseUrl, 'BEGIN ISOLATION LEVEL REPEATABLE READ', 'SELECT 1');

/** A migration class of a test's own, for a DataSource's list (a copy of the build holds only SQL ones). */
function migrationClass(name: string, up: (queryRunner: QueryRunner) => Promise<void>) {
  return class {
    name = name;
    revertDrops = 'no data';
    up = up;
    async down() {}
  };
}

describe('a release of several migrations, on a database the service uses', () => {
  type Copy = Awaited<ReturnType<typeof buildCopyWith>>;
  let t: TestApp;
  let release: Copy;
  let indexed: Copy;

  beforeAll(async () => {
    await ensureBuilt();
    [t, release, indexed] = await Promise.all([
      startTestApp(),
      buildCopyWith([
        { name: 'AddPetNote', sql: 'ALTER TABLE "pets" ADD "note" text' },
        { name: 'BackfillNotes', sql: `UPDATE "pets" SET "note" = "name"; SELECT pg_sleep(${SLOW_SECONDS})` },
        { name: 'BackfillNoteLengths', sql: 'UPDATE "pets" SET "note" = (1 / 0)::text' },
      ]),
      buildCopyWith([
        {
          name: 'AddPetsNameIndex',
          sql: 'CREATE INDEX CONCURRENTLY "pets_name_idx" ON "pets" ("name")',
          transaction: false,
        },
      ]),
    ]);
  }, 300_000);

  afterAll(() => Promise.allSettled([t?.close(), release?.remove(), indexed?.remove()]), 30_000);

  it('each migration commits before the next starts: while a backfill runs, the table the first one altered is free and a GET /v1/pets is answered; one that fails leaves those before it applied and recorded, itself not, and says which', async () => {
    const [addNote, backfill, failing] = release.migrations;
    // A row for the last backfill to fail on.
    expect((await request(t.origin, '/v1/pets', jsonBody({ name: 'Rex', categoryId: 1 }))).status).toBe(201);
    const running = migrationRun(release.root, t.database.url, {}, 90_000);
    const pid = await pollUntil(() => sessionRunning(t.sql, 'pg_sleep'), {
      timeoutMs: 30_000,
      what: 'the backfill to run',
    });
    const { rows } = await t.sql.query<{ mode: string }>(
      "SELECT mode FROM pg_locks WHERE pid = $1 AND relation = 'pets'::regclass AND granted ORDER BY mode",
      [pid],
    );
    const response = await request(t.origin, '/v1/pets', { headers: auth() });
    const stillRunning = await sessionRunning(t.sql, 'pg_sleep');
    // The backfill's own row lock, which reads do not wait for; not the ALTER TABLE's ACCESS EXCLUSIVE.
    expect(rows.map((row) => row.mode)).toEqual(['RowExclusiveLock']);
    expect(response.status).toBe(200);
    // Answered while the backfill still ran, not after it.
    expect(stillRunning).toBe(pid);

    expect(await running).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `migration failed: ${failing} failed: division by zero; it is not recorded as applied, and ${addNote} and ` +
        `${backfill} before it were applied and recorded. Fix ${failing}, then run the migrations again: they resume with it.\n`,
    });
    expect((await applied(t.sql)).slice(-2)).toEqual([addNote, backfill]);
    expect((await t.sql.query('SELECT name, note FROM pets')).rows).toEqual([{ name: 'Rex', note: 'Rex' }]);
  }, 120_000);

  it('a migration with transaction = false builds an index with CREATE INDEX CONCURRENTLY while a createPet goes through', async () => {
    const [addIndex] = indexed.migrations;
    // It keeps the build running while the test looks.
    const snapshot = await olderSnapshot(t.database.url);
    let finished: Finished | undefined;
    const running = migrationRun(indexed.root, t.database.url, { MIGRATION_LOCK_TIMEOUT_MS: '60000' }, 90_000).then(
      (result) => (finished = result),
    );
    await pollUntil(
      async () => {
        if (finished) throw new Error(`migration:run ended: ${JSON.stringify(finished)}`);
        const { rows } = await t.sql.query<{ phase: string }>('SELECT phase FROM pg_stat_progress_create_index');
        return rows[0]?.phase === 'waiting for old snapshots';
      },
      { timeoutMs: 30_000, what: 'the index build to wait for the older snapshot' },
    );

    const created = await request(t.origin, '/v1/pets', jsonBody({ name: 'Ziggy', categoryId: 1 }));
    expect(created.status).toBe(201);
    // The insert went through while the build still ran.
    const { rows: building } = await t.sql.query('SELECT 1 FROM pg_stat_progress_create_index');
    expect(building).toHaveLength(1);

    await snapshot.end();
    await running;
    expect(finished).toMatchObject({ code: 0, stdout: expect.stringMatching(`^Applied ${addIndex} on `) });
    const { rows } = await t.sql.query<{ indisvalid: boolean }>(
      "SELECT indisvalid FROM pg_index WHERE indexrelid = 'pets_name_idx'::regclass",
    );
    expect(rows).toEqual([{ indisvalid: true }]);
    expect(await applied(t.sql)).toContain(addIndex);
  }, 120_000);
});

describe('migration runners, on a database of their own', () => {
  let database: TestDatabase;
  let sql: Client;
  const sources: DataSource[] = [];

  const open = async (...extra: (new () => MigrationInterface)[]) => {
    const dataSource = await new DataSource({
      ...commandDataSourceOptions(database.url),
      migrations: [...MIGRATIONS, ...extra],
    }).initialize();
    sources.push(dataSource);
    return dataSource;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    sql = new Client({ connectionString: database.url });
    await sql.connect();
  });

  afterAll(async () => {
    await Promise.allSettled(sources.map((dataSource) => dataSource.destroy()));
    await sql?.end();
    await database?.drop();
  }, 30_000);

  it("a migration pausing longer than the role's idle-in-transaction bound is applied", async () => {
    const IDLE_BOUND_MS = 500;
    await sql.query(
      `ALTER ROLE CURRENT_USER IN DATABASE ${database.url.split('/').pop()} SET idle_in_transaction_session_timeout = ${IDLE_BOUND_MS}`,
    );
    const Pausing = migrationClass('AddPetNotePausing1799000000000', async (queryRunner) => {
      await queryRunner.query('ALTER TABLE "pets" ADD "note" text');
      // Work of its own between two statements, longer than the role lets a transaction sit idle.
      await pause(IDLE_BOUND_MS * 4);
      await queryRunner.query('UPDATE "pets" SET "note" = "name"');
    });
    const dataSource = await open(Pausing);
    const migrations = await runMigrations(dataSource, { migrationLockTimeoutMs: 3_000 });
    expect(migrations.at(-1)?.name).toBe('AddPetNotePausing1799000000000');
    expect(await applied(sql)).toContain('AddPetNotePausing1799000000000');
  }, 60_000);

  it('a runner started while another runs a migration longer than MIGRATION_LOCK_TIMEOUT_MS waits for it and finds nothing to do', async () => {
    const LOCK_TIMEOUT_MS = 500;
    const Slow = migrationClass('SlowStep1799000000001', async (queryRunner) => {
      await queryRunner.query(`SELECT pg_sleep(${(LOCK_TIMEOUT_MS * 6) / 1000})`);
    });
    const [first, second] = await Promise.all([open(Slow), open(Slow)]);
    const running = runMigrations(first, { migrationLockTimeoutMs: LOCK_TIMEOUT_MS });
    await pollUntil(() => sessionRunning(sql, 'pg_sleep'), { timeoutMs: 30_000, what: 'the slow migration to run' });
    const waiting = runMigrations(second, { migrationLockTimeoutMs: LOCK_TIMEOUT_MS });
    const [ran, waited] = await Promise.all([running, waiting]);
    expect(ran.map((migration) => migration.name)).toContain('SlowStep1799000000001');
    expect(waited).toEqual([]);
  }, 60_000);

  describe('a migration with transaction = false', () => {
    /** CREATE INDEX CONCURRENTLY up, DROP INDEX CONCURRENTLY down: neither can run in a transaction. */
    class AddPetsStatusNameIndex1799000000002 {
      name = 'AddPetsStatusNameIndex1799000000002';
      transaction = false as const;
      revertDrops = 'no data: only the index "pets_status_name_idx"';
      async up(queryRunner: QueryRunner) {
        await queryRunner.query('CREATE INDEX CONCURRENTLY "pets_status_name_idx" ON "pets" ("status", "name")');
      }
      async down(queryRunner: QueryRunner) {
        await queryRunner.query('DROP INDEX CONCURRENTLY IF EXISTS "pets_status_name_idx"');
      }
    }
    const index = async () =>
      (await sql.query("SELECT to_regclass('pets_status_name_idx') IS NOT NULL AS present")).rows[0] as {
        present: boolean;
      };

    it('still waits at most MIGRATION_LOCK_TIMEOUT_MS for a lock, and is not applied', async () => {
      const holder = await openTransaction(database.url, 'BEGIN', 'LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
      try {
        const dataSource = await open(AddPetsStatusNameIndex1799000000002);
        const error = await runMigrations(dataSource, { migrationLockTimeoutMs: 500 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MigrationLockTimeoutError);
        expect((error as Error).message).toMatch(
          /^waited 500 ms \(MIGRATION_LOCK_TIMEOUT_MS\) for a lock on "pets", held by another session, at `CREATE INDEX CONCURRENTLY "pets_status_name_idx" ON "pets" \("status", "name"\)`; nothing was applied\. /,
        );
        expect((error as Error).message).toContain('The migration that stopped: AddPetsStatusNameIndex1799000000002.');
        expect((error as Error).message).toContain(
          "a concurrent index build waits for every older transaction of this database, not only for the table's lock holders; find them, oldest first: SELECT pid, state, xact_start, query FROM pg_stat_activity WHERE datname = current_database() AND xact_start IS NOT NULL",
        );
      } finally {
        await holder.query('ROLLBACK');
        await holder.end();
      }
      expect(await applied(sql)).not.toContain('AddPetsStatusNameIndex1799000000002');
      expect(await index()).toEqual({ present: false });
    }, 60_000);

    /** Ends the backend of `build` (the index's build) once it waits for an older snapshot, as a failover does. */
    const cutBuild = async (build: () => Promise<unknown>) => {
      const older = await olderSnapshot(database.url);
      try {
        let outcome: unknown = undefined;
        const settled = build().then(
          () => (outcome = 'done'),
          (error: unknown) => (outcome = error),
        );
        const pid = await pollUntil(
          async () => {
            if (outcome !== undefined)
              throw new Error(`the build ended before the cut: ${outcome instanceof Error ? outcome.message : 'done'}`);
            const { rows } = await sql.query<{ pid: number }>(
              "SELECT pid FROM pg_stat_progress_create_index WHERE phase = 'waiting for old snapshots'",
            );
            return rows[0]?.pid;
          },
          { timeoutMs: 30_000, what: 'the index build to wait for the older snapshot' },
        );
        await sql.query('SELECT pg_terminate_backend($1)', [pid]);
        return await settled;
      } finally {
        await older.query('COMMIT');
        await older.end();
      }
    };
    const invalid = async () =>
      (
        await sql.query<{ name: string }>(
          'SELECT indexrelid::regclass::text AS name FROM pg_index WHERE NOT indisvalid',
        )
      ).rows;

    it('whose build is cut by a terminated backend drops the INVALID index it left, on a fresh connection, and says so', async () => {
      const dataSource = await open(AddPetsStatusNameIndex1799000000002);
      const error = await cutBuild(() => runMigrations(dataSource, { migrationLockTimeoutMs: 60_000 }));
      expect((error as Error).message).toMatch(
        /^AddPetsStatusNameIndex1799000000002 failed: terminating connection due to administrator command; it is not recorded as applied, and nothing before it was applied in this run\. The INVALID index public\.pets_status_name_idx it left was dropped\. It ran outside a transaction \(transaction = false\)/,
      );
      expect(await invalid()).toEqual([]);
      expect(await applied(sql)).not.toContain('AddPetsStatusNameIndex1799000000002');
    }, 60_000);

    it('is applied over the INVALID index an earlier cut build left', async () => {
      await runMigrations(await open(), { migrationLockTimeoutMs: 3_000 });
      const other = new Client({ connectionString: database.url });
      other.on('error', () => undefined);
      await other.connect();
      // The role's bounds for the service's sessions would end this build before the cut.
      await other.query('SET lock_timeout = 0; SET statement_timeout = 0');
      await cutBuild(() =>
        other.query('CREATE INDEX CONCURRENTLY "pets_status_name_idx" ON "pets" ("status", "name")'),
      );
      await other.end().catch(() => undefined);
      expect(await invalid()).toEqual([{ name: 'pets_status_name_idx' }]);

      const dataSource = await open(AddPetsStatusNameIndex1799000000002);
      const rerun = await runMigrations(dataSource, { migrationLockTimeoutMs: 3_000 }).catch((e: unknown) => e);
      expect(rerun).toEqual([expect.objectContaining({ name: 'AddPetsStatusNameIndex1799000000002' })]);
      expect(await invalid()).toEqual([]);
      expect(await index()).toEqual({ present: true });

      // Reverted outside a transaction too: DROP INDEX CONCURRENTLY.
      await revertLastMigration(dataSource, { migrationLockTimeoutMs: 3_000 });
      expect(await index()).toEqual({ present: false });
      expect(await applied(sql)).not.toContain('AddPetsStatusNameIndex1799000000002');
    }, 60_000);
  });
});
