import { join } from 'node:path';
import pg from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { built, postmasterPid, startScratchCluster } from './server-process.js';

/** How the seeded animals' statuses are spread. */
export type StatusSpread =
  /** Evenly over the three statuses. */
  | 'even'
  /** The oldest 80 % mostly sold, the rest even: a store that has run for years. */
  | 'aged';

export interface BenchDatabase {
  url: string;
  /** The postmaster of each embedded cluster, by name (`PostgreSQL`); none for a URL's. */
  postmasters: Record<string, number>;
  /** A client on the database, for seeding. */
  sql: pg.Client;
  /** Empties `pets` and fills it with `count` animals; ids start at 1. */
  reseed(count: number, spread?: StatusSpread): Promise<void>;
  /** Adds `count` more animals, statuses spread evenly. */
  grow(count: number): Promise<void>;
  stop(): Promise<void>;
}

export interface BenchDatabaseOptions {
  /** The environment variable that may name a database to use instead of an embedded one. */
  urlVariable?: string;
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
 * a temporary directory, started the way `npm start` starts it. The migrations
 * are applied either way.
 */
export async function startBenchDatabase({
  urlVariable = 'BENCH_DATABASE_URL',
}: BenchDatabaseOptions = {}): Promise<BenchDatabase> {
  const cluster = process.env[urlVariable] ? null : await startScratchCluster();
  const url = process.env[urlVariable] ?? cluster!.url;
  await migrate(url).catch(async (error: unknown) => {
    await cluster?.close();
    throw error;
  });
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  // Seeding a million rows is not a request: the role's statement_timeout (the requests' bound) does not apply.
  await sql.query('SET statement_timeout = 0');
  return {
    url,
    postmasters: cluster ? { PostgreSQL: postmasterPid(join(cluster.directory, 'postgres')) } : {},
    sql,
    async reseed(count, spread = 'even') {
      await sql.query('TRUNCATE pets RESTART IDENTITY');
      await sql.query(insertAnimals(spread), [count]);
      await sql.query('VACUUM ANALYZE pets');
    },
    async grow(count) {
      if (count <= 0) return;
      await sql.query(insertAnimals('even'), [count]);
      await sql.query('VACUUM ANALYZE pets');
    },
    async stop() {
      await sql.end();
      await cluster?.close();
    },
  };
}
