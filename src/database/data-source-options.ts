import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataSourceOptions } from 'typeorm';
import { DatabaseClient } from './database-client.js';

// Compiled, this file runs from dist/database next to dist/migrations; under
// ts-jest it runs from src/database and the migrations are the .ts sources.
const here = fileURLToPath(import.meta.url);
const compiled = extname(here) === '.js';
const directory = dirname(here);
const migrations = compiled
  ? join(directory, '..', 'migrations', '*.js')
  : join(directory, '..', '..', 'migrations', '*.ts');

/**
 * The one set of DataSource options, shared by the service and the TypeORM CLI. Entities are not listed
 * here: each feature module registers its own (`TypeOrmModule.forFeature`), and the CLIs list theirs.
 */
export function dataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    migrations: [migrations],
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
