import { Client } from 'pg';
import { ensureBuilt } from './built-service.js';
import { ServiceProcess, startService } from './service-process.js';
import { createTestDatabase, TestDatabase } from './test-database.js';

export interface ProductionService {
  service: ServiceProcess;
  database: TestDatabase;
  /** A client on the service's database. */
  sql: Client;
  /** Stops the service (SIGTERM, waiting for its exit), ends the client and drops the database. */
  close(): Promise<void>;
}

/**
 * The built service in production mode on a fresh test database, migrated at start, and a client on that database.
 * `env` holds the settings production requires and any others.
 */
export async function startProductionService(
  env: { API_KEYS: string; CURSOR_SECRET: string } & Record<string, string>,
): Promise<ProductionService> {
  await ensureBuilt();
  const database = await createTestDatabase();
  let service: ServiceProcess | undefined;
  const sql = new Client({ connectionString: database.url });
  const close = async () => {
    service?.kill('SIGTERM');
    await service?.exited;
    await sql.end().catch(() => undefined);
    await database.drop();
  };
  try {
    await sql.connect();
    service = await startService({
      DATABASE_URL: database.url,
      NODE_ENV: 'production',
      MIGRATIONS_RUN: 'true',
      ...env,
    });
  } catch (error) {
    await close();
    throw error;
  }
  return { service, database, sql, close };
}
