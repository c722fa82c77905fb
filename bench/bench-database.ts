import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { freePort } from './server-process.js';

/** The built service, imported at run time: the benchmark measures what `npm run build` produced. */
const built = (path: string) => new URL(`../../dist/${path}`, import.meta.url).href;

interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface BenchDatabase {
  url: string;
  /** A client on the database, for seeding. */
  sql: pg.Client;
  /** Empties `pets` and fills it with `count` animals, statuses spread evenly; ids start at 1. */
  reseed(count: number): Promise<void>;
  /** Adds `count` more animals. */
  grow(count: number): Promise<void>;
  stop(): Promise<void>;
}

async function migrate(url: string): Promise<void> {
  const { dataSourceOptions } = (await import(built('database/data-source-options.js'))) as {
    dataSourceOptions(url: string): DataSourceOptions;
  };
  const dataSource = await new DataSource(dataSourceOptions(url)).initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
}

const INSERT_ANIMALS = `
  INSERT INTO pets (name, category_id, status)
  SELECT 'Animal ' || n, 1 + n % 50, (ARRAY['available', 'pending', 'sold'])[1 + n % 3]
  FROM generate_series(1, $1::int) AS n`;

/**
 * `BENCH_DATABASE_URL` (a throw-away database: its `pets` table is emptied),
 * or an embedded PostgreSQL under a temporary directory, started the way
 * `npm start` starts it. The migrations are applied either way.
 */
export async function startBenchDatabase(): Promise<BenchDatabase> {
  let embedded: EmbeddedDatabase | null = null;
  let dataDir: string | null = null;
  let url = process.env.BENCH_DATABASE_URL;
  if (!url) {
    const { startEmbeddedPostgres } = (await import(built('database/embedded-postgres.js'))) as {
      startEmbeddedPostgres(options: { dataDir: string; port: number }): Promise<EmbeddedDatabase>;
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
    async reseed(count) {
      await sql.query('TRUNCATE pets RESTART IDENTITY');
      await sql.query(INSERT_ANIMALS, [count]);
      await sql.query('VACUUM ANALYZE pets');
    },
    async grow(count) {
      if (count <= 0) return;
      await sql.query(INSERT_ANIMALS, [count]);
      await sql.query('VACUUM ANALYZE pets');
    },
    async stop() {
      await sql.end();
      await embedded?.stop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
