import { rmSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import getPort from 'get-port';
import { type EmbeddedDatabase, type EmbeddedPostgresOptions, startEmbeddedPostgres } from './embedded-postgres.js';

/** A database thrown away afterwards, so that nobody's data plays a part. */
export interface ScratchDatabase {
  url: string;
  /** Drops the database (or stops and deletes the cluster). */
  close(): Promise<void>;
}

export interface ScratchCluster extends ScratchDatabase {
  /** The new temporary directory the cluster lives in (enterable by the `postgres` user), deleted by `close()`. */
  directory: string;
  port: number;
  /** Shuts PostgreSQL down (a fast shutdown: sessions are ended), keeping its files for `start()`. */
  pause(): Promise<void>;
  /** Starts it again after `pause()`, on the same port. */
  start(): Promise<void>;
}

/**
 * A throw-away embedded cluster under a new temporary directory (never the one under DATA_DIR), with further
 * `postgres` settings in `postgresFlags`, stopped and deleted by `close()`, or else when the process exits.
 * `orElse` ends a refusal to start (EmbeddedPostgresOptions).
 */
export async function startScratchCluster({
  postgresFlags = [],
  orElse,
}: Pick<EmbeddedPostgresOptions, 'postgresFlags' | 'orElse'> = {}): Promise<ScratchCluster> {
  const dataDir = await mkdtemp(join(tmpdir(), 'animal-store-scratch-'));
  // As root, the cluster runs as the `postgres` user, which must enter the directory.
  await chmod(dataDir, 0o755);
  const options = { dataDir, port: await getPort(), postgresFlags, orElse };
  // Runs after the cluster's own exit handler has stopped it (startEmbeddedPostgres puts that one first).
  const removeOnExit = () => rmSync(dataDir, { recursive: true, force: true });
  process.once('exit', removeOnExit);
  let cluster: EmbeddedDatabase | null = null;
  try {
    cluster = await startEmbeddedPostgres(options);
  } catch (error) {
    process.removeListener('exit', removeOnExit);
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: cluster.url,
    directory: dataDir,
    port: options.port,
    pause: async () => {
      await cluster?.stop();
      cluster = null;
    },
    start: async () => {
      cluster ??= await startEmbeddedPostgres(options);
    },
    close: async () => {
      await cluster?.stop();
      process.removeListener('exit', removeOnExit);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
