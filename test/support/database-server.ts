import freePort from 'get-port';
import { EmbeddedPostgresError } from '../../dev/embedded-postgres-error.js';
import { startScratchCluster } from '../../dev/scratch-database.js';

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
  /** The directory its files live in (the cluster under `postgres/`). */
  directory: string;
  /** Shuts PostgreSQL down (fast shutdown: sessions are terminated), keeping its data for `start()`. */
  pause(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A throw-away embedded PostgreSQL cluster, the one `npm start` and the dev commands use (dev/scratch-database.ts):
 * no fsync, deleted on stop or when the process exits. `flags` are further `postgres` settings
 * (`['-c', 'max_connections=6']`), which win over the defaults.
 */
export async function startEmbeddedServer({ flags = [] }: { flags?: string[] } = {}): Promise<EmbeddedServer> {
  const cluster = await startScratchCluster({
    postgresFlags: [...THROWAWAY_CLUSTER_FLAGS, '-c', 'max_connections=300', ...flags],
    orElse: 'set TEST_DATABASE_URL to a PostgreSQL of your own',
  });
  const adminUrl = new URL(cluster.url);
  adminUrl.pathname = '/postgres';
  return {
    port: cluster.port,
    directory: cluster.directory,
    adminUrl: adminUrl.toString(),
    description: 'embedded PostgreSQL (TEST_DATABASE=embedded)',
    pause: () => cluster.pause(),
    start: () => cluster.start(),
    stop: () => cluster.close(),
  };
}

/** The backends `TEST_DATABASE` chooses from: `embedded` needs nothing but Node, `testcontainers` a Docker engine. */
const BACKENDS: Record<string, () => Promise<DatabaseServer>> = {
  embedded: startEmbeddedServer,
  testcontainers: startContainer,
};

/**
 * Jest's global setup (test/support/jest/global-setup.ts): one PostgreSQL server for the run, `TEST_DATABASE_URL` if
 * set, else the backend `TEST_DATABASE` names (embedded by default); every test file creates its own database in it.
 */
export async function setUpDatabaseServer(): Promise<void> {
  let server: DatabaseServer;
  try {
    const backend = process.env.TEST_DATABASE || 'embedded';
    if (process.env.TEST_DATABASE_URL) {
      const adminUrl = process.env.TEST_DATABASE_URL;
      server = { adminUrl, description: 'the PostgreSQL of TEST_DATABASE_URL', stop: () => Promise.resolve() };
    } else if (Object.hasOwn(BACKENDS, backend)) {
      server = await BACKENDS[backend]();
    } else {
      throw new OneLineError(`TEST_DATABASE must be one of ${Object.keys(BACKENDS).join(', ')}, got "${backend}".`);
    }
  } catch (error) {
    if (!(error instanceof OneLineError || error instanceof EmbeddedPostgresError)) throw error;
    // Jest would print a failing global setup with its stack; this is the whole story.
    process.stderr.write(`Test database: ${error.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`\nTest database: ${server.description}\n`);
  process.env.TEST_DATABASE_ADMIN_URL = server.adminUrl;
  (globalThis as { databaseServer?: DatabaseServer }).databaseServer = server;
}
