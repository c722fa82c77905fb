import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { roleSessionTimeoutsSql } from '../../src/database/session-timeouts.js';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function withAdmin<T>(adminUrl: string | undefined, work: (client: Client) => Promise<T>): Promise<T> {
  if (!adminUrl) throw new Error('TEST_DATABASE_ADMIN_URL is not set: run the tests through jest (global setup).');
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, empty database of its own for one test file; its name always says "test". Its role has the requests'
 * session timeouts there, as the service's role has wherever the roles are made.
 * On the run's server unless a test brings its own (`adminUrl`).
 */
export async function createTestDatabase(adminUrl = process.env.TEST_DATABASE_ADMIN_URL): Promise<TestDatabase> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, async (client) => {
    await client.query(`CREATE DATABASE ${name}`);
    await client.query(roleSessionTimeoutsSql(name));
  });
  const url = new URL(adminUrl!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () =>
      void (await withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

/**
 * Ends the service's sessions on the database of `sql`, as a failover or a restart of the server does; its pool
 * reconnects. Returns how many were ended.
 */
export async function terminateServiceSessions(sql: Client): Promise<number> {
  const { rows } = await sql.query<{ killed: boolean }>(
    `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
     WHERE datname = current_database() AND application_name = 'animal-store'`,
  );
  return rows.filter((row) => row.killed).length;
}

/**
 * Makes the database of `sql` read-only (a demoted primary after a failover, a maintenance switch), or writable
 * again, and ends the service's sessions so that its pool reconnects under the new default.
 */
export async function setDatabaseReadOnly(sql: Client, on: boolean): Promise<void> {
  const { rows } = await sql.query<{ name: string }>('SELECT current_database() AS name');
  await sql.query(`ALTER DATABASE ${rows[0].name} ${on ? 'SET default_transaction_read_only = on' : 'RESET ALL'}`);
  await terminateServiceSessions(sql);
}
