import { DataSource } from 'typeorm';
import { loadConfig } from '../config/app-config.js';
import { embeddedDatabaseUrl } from './embedded-postgres.js';
import { dataSourceOptions } from './data-source-options.js';

/**
 * Entry point of the TypeORM CLI (`npm run migration:*`): `DATABASE_URL`, or
 * the embedded cluster under DATA_DIR when it is unset (the cluster must be
 * running, e.g. while `npm start` is).
 */
async function createDataSource(): Promise<DataSource> {
  const config = loadConfig();
  const url = config.databaseUrl ?? (await embeddedDatabaseUrl(config.dataDir, config.embeddedPostgresPort));
  return new DataSource(dataSourceOptions(url));
}

export default createDataSource();
