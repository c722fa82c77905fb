import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { freePort } from './server-process.js';

/** The built service, imported at run time: the benchmark measures what `npm run build` produced. */
const built = (path: string) => new URL(`../../dist/src/${path}`, import.meta.url).href;

interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** How the seeded animals' statuses are spread. */
export type StatusSpread =
  /** Evenly over the three statuses. */
  | 'even'
  /** The oldest 80 % mostly sold, the rest even: a store that has run for years. */
  | 'aged';

export interface BenchDatabase {
  url: string;
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

async function migrate(url: string): Promise<void> {
  const { dataSourceOptions } = (await import(built('database/data-source-options.js'))) as {
    dataSourceOptions: (url: string) => DataSourceOptions;
  };
  const dataSource = await new DataSource(dataSourceOptions(url)).initialize();
  try {
    await dataSource.runMigrations();
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
  let embedded: EmbeddedDatabase | null = null;
  let dataDir: string | null = null;
  let url = process.env[urlVariable];
  if (!url) {
    const { startEmbeddedPostgres } = (await import(built('dev/embedded-postgres.js'))) as {
      startEmbeddedPostgres: (options: { dataDir: string; port: number }) => Promise<EmbeddedDatabase>;
    };
    dataDir = await mkdtemp(join(tmpdir(), 'animal-store-bench-'));
    // The cluster may run as a separate `postgres` user, which must reach the directory.
    await chmod(dataDir, 0o755);
    embedded = await startEmbeddedPostgres({ dataDir, port: await freePort() });
    url = embedded.url;
  }
  await migrate(url);
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  return {
    url,
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
      await embedded?.stop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
