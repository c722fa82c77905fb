import type { DataSourceOptions } from 'typeorm';
import type { DatabasePoolConfig } from '../config/app-config.js';
import { DATABASE_POOL_DEFAULTS } from '../config/app-config.js';
import { DatabaseClient } from './database-client.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { RETRY_DEADLINE_MS } from './database-faults.js';
import { SESSION_TIMEOUTS } from './session-timeouts.js';

/**
 * The one set of DataSource options, shared by the service and the commands. Entities are not listed
 * here: each feature module registers its own (`TypeOrmModule.forFeature`), and the CLIs list theirs.
 */
export function dataSourceOptions(url: string, pool: DatabasePoolConfig = DATABASE_POOL_DEFAULTS): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    extra: {
      max: pool.max,
      idleTimeoutMillis: pool.idleTimeoutMs,
      // A dead or unreachable database must fail a request quickly (503), never hang it; a request also waits
      // this long at most for a pooled connection.
      connectionTimeoutMillis: RETRY_DEADLINE_MS,
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

/** The commands' options (migrations, keys): the service's, without the bound meant for a request's queries. */
export function commandDataSourceOptions(url: string): DataSourceOptions {
  const options = dataSourceOptions(url);
  const { query_timeout: _requestBound, ...extra } = options.extra as Record<string, unknown>;
  return { ...options, extra };
}
