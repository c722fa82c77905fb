import { DataSource } from 'typeorm';
import { readConfig } from '../config/app-config.js';
import { embeddedDatabaseUrl, EmbeddedPostgresError, runningPort } from './embedded-postgres.js';
import { dataSourceOptions } from './data-source-options.js';

/**
 * Entry point of TypeORM's CLI, used only by `npm run migration:generate` (run, show and revert are
 * src/cli/migrations.ts): `DATABASE_URL`, or the embedded cluster running from DATA_DIR (e.g. while `npm start` runs).
 */
async function createDataSource(): Promise<DataSource> {
  const config = await readConfig();
  if (config.databaseUrl) return new DataSource(dataSourceOptions(config.databaseUrl));
  const port = await runningPort(config.dataDir);
  if (port === null) {
    throw new EmbeddedPostgresError(
      `No PostgreSQL runs from DATA_DIR=${config.dataDir}: start the service (npm start) in another shell, or set DATABASE_URL.`,
    );
  }
  return new DataSource(dataSourceOptions(await embeddedDatabaseUrl(config.dataDir, port)));
}

export default createDataSource();
