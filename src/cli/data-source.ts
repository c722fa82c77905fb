import { DataSource } from 'typeorm';
import { readConfig } from '../config/app-config.js';
import { embeddedDatabaseUrl, EmbeddedPostgresError, runningPort } from '../database/embedded-postgres.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { ApiKeyEntity } from '../auth/api-keys/api-key.entity.js';
import { IdempotencyKeyEntity } from '../pets/idempotency/idempotency-key.entity.js';
import { PetEntity } from '../pets/pet.entity.js';

/**
 * Entry point of TypeORM's CLI, used only by `npm run migration:generate` (run, show and revert are
 * src/cli/migrations.ts): `DATABASE_URL`, or the embedded cluster running from DATA_DIR (e.g. while `npm start` runs).
 */
async function createDataSource(): Promise<DataSource> {
  const config = await readConfig('database');
  let url = config.databaseUrl;
  if (!url) {
    const port = await runningPort(config.dataDir);
    if (port === null) {
      throw new EmbeddedPostgresError(
        `No PostgreSQL runs from DATA_DIR=${config.dataDir}: start the service (npm start) in another shell, or set DATABASE_URL.`,
      );
    }
    url = await embeddedDatabaseUrl(config.dataDir, port);
  }
  // Listed rather than globbed: TypeORM imports globbed files all at once, and Jest's ESM loader
  // (Node 20) intermittently fails concurrent imports of modules sharing a dependency.
  return new DataSource({ ...dataSourceOptions(url), entities: [PetEntity, ApiKeyEntity, IdempotencyKeyEntity] });
}

export default createDataSource();
