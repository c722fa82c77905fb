import type { DataSourceOptions } from 'typeorm';
import { DatabaseClient } from './database-client.js';
import { MIGRATIONS } from './migrations.js';

/**
 * The one set of DataSource options, shared by the service and the TypeORM CLI. Entities are not listed
 * here: each feature module registers its own (`TypeOrmModule.forFeature`), and the CLIs list theirs.
 */
export function dataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
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
