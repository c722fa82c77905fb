import type { DataSourceOptions } from 'typeorm';
import { ApiKeyEntity } from '../api-keys/api-key.entity.js';
import { IdempotencyKeyEntity } from '../idempotency/idempotency-key.entity.js';
import { PetEntity } from '../pets/pet.entity.js';
import { DatabaseClient } from './database-client.js';
import { MIGRATIONS } from './migrations.js';

/** The one set of DataSource options, shared by the service and the TypeORM CLI. */
export function dataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    // Listed rather than globbed: TypeORM imports globbed files all at once, and Jest's ESM loader
    // (Node 20) intermittently fails concurrent imports of modules sharing a dependency.
    entities: [PetEntity, ApiKeyEntity, IdempotencyKeyEntity],
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    extra: {
      max: 10,
      // A dead or unreachable database must fail a request quickly (503), never hang it.
      connectionTimeoutMillis: 2_000,
      statement_timeout: 5_000,
      queryDeadlineMs: 6_000,
      idle_in_transaction_session_timeout: 10_000,
      application_name: 'animal-store',
      Client: DatabaseClient,
    },
  };
}
