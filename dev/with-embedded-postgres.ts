import { readConfig } from '../src/config/app-config.js';
import { ConfigError } from '../src/config/problem.js';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import { loadEmbeddedPostgres } from './load-embedded-postgres.js';

/**
 * Runs a production entry point (`entry` imports it; it runs on import) as `npm start` and the npm run commands
 * do on a fresh clone: with DATABASE_URL set (the environment or `.env`), as it is; without, on the embedded
 * PostgreSQL under DATA_DIR, whose URL it is given in DATABASE_URL. The service takes the cluster for itself
 * (refusing one that another live process runs) and handles SIGTERM/SIGINT itself; a command uses the running one
 * (`npm start` in another shell) or one started for it. A cluster started here stops when this process ends.
 */
export async function withEmbeddedPostgres(entry: () => Promise<unknown>, { service = false } = {}): Promise<void> {
  try {
    // A bad value is left for the entry point to refuse, in its own words.
    const config = await readConfig('database').catch((error: unknown) => {
      if (error instanceof ConfigError) return null;
      throw error;
    });
    if (config && !config.databaseUrl) {
      const embedded = await loadEmbeddedPostgres(service);
      const options = {
        dataDir: config.dataDir,
        port: config.embeddedPostgresPort,
        notice: (message: string) => process.stderr.write(`${message}\n`),
      };
      process.env.DATABASE_URL = service
        ? (await embedded.startEmbeddedPostgres(options)).url
        : await embedded.openEmbeddedDatabase(options);
    }
  } catch (error) {
    if (!(error instanceof EmbeddedPostgresError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  await entry();
}
