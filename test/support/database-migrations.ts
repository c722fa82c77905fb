import { join } from 'node:path';
import type { Client } from 'pg';
import { run } from './built-service.js';

/** `npm run migration:run` of a copy of the build (buildCopyWith), against `databaseUrl`. */
export const migrationRun = (root: string, databaseUrl: string, env: Record<string, string> = {}, timeoutMs = 60_000) =>
  run(
    process.execPath,
    [join(root, 'dist', 'src', 'cli', 'migrations.js'), 'run'],
    { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, ...env },
    timeoutMs,
    { cwd: root },
  );

/** The migrations recorded as applied, in order. */
export const applied = async (sql: Client) =>
  (await sql.query<{ name: string }>('SELECT name FROM migrations ORDER BY id')).rows.map((row) => row.name);
