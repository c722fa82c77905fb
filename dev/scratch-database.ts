import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import getPort from 'get-port';
import { Client } from 'pg';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { oneLine } from '../src/cli/cli-database.js';

/** A database thrown away afterwards, so that nobody's data plays a part. */
export interface ScratchDatabase {
  url: string;
  /** Drops the database (or stops and deletes the cluster). */
  close(): Promise<void>;
}

/**
 * An empty database that is thrown away afterwards, so that nobody's data plays a part: a new database in the
 * server `databaseUrl` names, or, without one, a throw-away embedded cluster (never the one under DATA_DIR).
 */
export async function openScratchDatabase(databaseUrl: string | undefined): Promise<ScratchDatabase> {
  return databaseUrl ? scratchDatabaseOn(databaseUrl) : startScratchCluster();
}

async function scratchDatabaseOn(databaseUrl: string): Promise<ScratchDatabase> {
  const name = `animal_store_scratch_${randomBytes(6).toString('hex')}`;
  const server = new URL(databaseUrl);
  const admin = async (sql: string) => {
    const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
    try {
      await client.connect();
      await client.query(sql);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  try {
    await admin(`CREATE DATABASE ${name}`);
  } catch (error) {
    throw new Error(
      `no scratch database could be created on ${server.hostname}:${server.port || 5432} (${oneLine(error)}): ` +
        'give the role in DATABASE_URL the CREATEDB privilege, or unset DATABASE_URL to use a throw-away embedded PostgreSQL.',
      { cause: error },
    );
  }
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), close: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export interface ScratchCluster extends ScratchDatabase {
  /** The new temporary directory the cluster lives in (enterable by the `postgres` user), deleted by `close()`. */
  directory: string;
}

/**
 * A throw-away embedded cluster under a new temporary directory (never the one under DATA_DIR), with further
 * `postgres` settings in `postgresFlags`, stopped and deleted by `close()`.
 */
export async function startScratchCluster({
  postgresFlags = [],
}: { postgresFlags?: readonly string[] } = {}): Promise<ScratchCluster> {
  const dataDir = await mkdtemp(join(tmpdir(), 'animal-store-scratch-'));
  // As root, the cluster runs as the `postgres` user, which must enter the directory.
  await chmod(dataDir, 0o755);
  try {
    const cluster = await startEmbeddedPostgres({ dataDir, port: await getPort(), postgresFlags });
    return {
      url: cluster.url,
      directory: dataDir,
      close: async () => {
        await cluster.stop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
