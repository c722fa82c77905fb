import { Client } from 'pg';
import { runBuilt } from './built-service.js';

/** `npm run migration:run` of a copy of the build (buildCopyWith), against `databaseUrl`. */
export const migrationRun = (root: string, databaseUrl: string, env: Record<string, string> = {}, timeoutMs = 60_000) =>
  runBuilt(root, 'src/cli/migrations.js', ['run'], { DATABASE_URL: databaseUrl, ...env }, timeoutMs);

/** The migrations recorded as applied, in order. */
export const applied = async (sql: Client) =>
  (await sql.query<{ name: string }>('SELECT name FROM migrations ORDER BY id')).rows.map((row) => row.name);

/**
 * Another session, inside a transaction opened by `statements` (a `BEGIN` first), holding what they take for as long
 * as the test needs: the role's idle-in-transaction bound does not end it.
 */
export async function openTransaction(databaseUrl: string, ...statements: string[]): Promise<Client> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('SET idle_in_transaction_session_timeout = 0');
  for (const statement of statements) await client.query(statement);
  return client;
}
