import { DataSource } from 'typeorm';
import { loadConfig } from '../config/app-config.js';
import { embeddedDatabaseUrl } from '../database/embedded-postgres.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { ApiKeyEntity } from '../auth/api-keys/api-key.entity.js';
import { IdempotencyKeyEntity } from '../http/idempotency/idempotency-key.entity.js';
import { PetEntity } from '../pets/pet.entity.js';

/**
 * Entry point of the TypeORM CLI (`npm run migration:*`): `DATABASE_URL`, or
 * the embedded cluster under DATA_DIR when it is unset (the cluster must be
 * running, e.g. while `npm start` is).
 */
async function createDataSource(): Promise<DataSource> {
  const config = loadConfig();
  const url = config.databaseUrl ?? (await embeddedDatabaseUrl(config.dataDir, config.embeddedPostgresPort));
  // Listed rather than globbed: TypeORM imports globbed files all at once, and Jest's ESM loader
  // (Node 20) intermittently fails concurrent imports of modules sharing a dependency.
  return new DataSource({ ...dataSourceOptions(url), entities: [PetEntity, ApiKeyEntity, IdempotencyKeyEntity] });
}

export default createDataSource();
