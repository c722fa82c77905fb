import { Logger } from '@nestjs/common';
import type { ClientBase } from 'pg';
import type { DataSourceOptions } from 'typeorm';
import { DATABASE_POOL_DEFAULTS } from '../config/app-config.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { RETRY_DEADLINE_MS } from './database-faults.js';
import { SESSION_TIMEOUTS } from './session-timeouts.js';

/** The one set of DataSource options, shared by the service and the commands; each module registers its entities. */
export function dataSourceOptions(url: string, pool = DATABASE_POOL_DEFAULTS): DataSourceOptions {
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
      // A dead or unreachable database fails a request quickly (503), and a request waits no longer for a connection.
      connectionTimeoutMillis: RETRY_DEADLINE_MS,
      // The server cancels a slow statement (SESSION_TIMEOUTS); this bounds one whose server or network went silent.
      query_timeout: SESSION_TIMEOUTS.statement_timeout + 1_000,
      // A startup parameter PgBouncer accepts and tracks per client.
      application_name: 'animal-store',
      // A released connection may emit `error` as the server ends its session: unheard, it would crash the process.
      onConnect: (client: ClientBase) => {
        client.on('error', (error) => new Logger('Database').warn(`Database connection lost: ${error.message}`));
      },
    },
  };
}

/** The commands' options (migrations, keys): the service's, without the bound meant for a request's queries. */
export function commandDataSourceOptions(url: string): DataSourceOptions {
  const options = dataSourceOptions(url);
  const { query_timeout: _requestBound, ...extra } = options.extra as Record<string, unknown>;
  return { ...options, extra };
}
