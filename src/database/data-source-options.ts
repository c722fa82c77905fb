import type { DataSourceOptions } from 'typeorm';
import { DatabaseClient } from './database-client.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { SESSION_TIMEOUTS } from './session-timeouts.js';

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
      // The server cancels a slow statement (SESSION_TIMEOUTS, role settings: no startup parameters, which
      // PgBouncer refuses); this bounds a query whose server or network went silent. The pool then drops
      // the connection.
      query_timeout: SESSION_TIMEOUTS.statement_timeout + 1_000,
      // A startup parameter PgBouncer accepts and tracks per client.
      application_name: 'animal-store',
      Client: DatabaseClient,
    },
  };
}
