import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { developmentApiKey } from './development-key.js';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import { loadEmbeddedPostgres } from './load-embedded-postgres.js';

/** The development wrapper's own settings: the service never reads them. */
const DEVELOPMENT_VARIABLES = z.object({
  DATABASE_URL: z.string().optional(),
  API_KEYS: z.string().optional(),
  NODE_ENV: z.string().optional(),
  DATA_DIR: z
    .string()
    .prefault('.data')
    .transform((raw) => resolve(raw)),
  EMBEDDED_POSTGRES_PORT: z
    .string()
    .default('5433')
    .refine((raw) => /^\d+$/.test(raw) && +raw >= 1 && +raw <= 65535, {
      error: ({ input }) => `must be an integer from 1 to 65535, got "${String(input)}"`,
    })
    .transform(Number),
});

/** The environment as the entry point will read it: `.env` under the real environment, which wins; empty is unset. */
export async function developmentSettings() {
  const envFile = resolve('.env');
  const fromFile = existsSync(envFile) ? parseEnv(await readFile(envFile, 'utf8')) : {};
  const set = Object.entries({ ...fromFile, ...process.env }).filter(
    ([, value]) => value !== undefined && value !== '',
  );
  const parsed = DEVELOPMENT_VARIABLES.safeParse(Object.fromEntries(set));
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  process.stderr.write(`Invalid configuration: ${String(issue.path[0])} ${issue.message}\n`);
  process.exit(1);
}

/**
 * Runs a production entry point (`entry` imports it; it runs on import) as `npm start` and the npm run commands
 * do on a fresh clone, filling in what development lacks through the environment the entry point reads: without
 * DATABASE_URL, the embedded PostgreSQL under DATA_DIR; for the service outside production without API_KEYS, a
 * development key kept in DATA_DIR. The service takes the cluster for itself (refusing one that another live process
 * runs) and handles SIGTERM/SIGINT itself; a command uses the running one (`npm start` in another shell) or one
 * started for it. A cluster started here stops when this process ends.
 */
export async function withEmbeddedPostgres(entry: () => Promise<unknown>, { service = false } = {}): Promise<void> {
  const settings = await developmentSettings();
  try {
    if (!settings.DATABASE_URL) {
      const embedded = await loadEmbeddedPostgres(service);
      const options = {
        dataDir: settings.DATA_DIR,
        port: settings.EMBEDDED_POSTGRES_PORT,
        notice: (message: string) => process.stderr.write(`${message}\n`),
      };
      process.env.DATABASE_URL = service
        ? (await embedded.startEmbeddedPostgres(options)).url
        : await embedded.openEmbeddedDatabase(options);
    }
  } catch (error) {
    if (!(error instanceof EmbeddedPostgresError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  if (service && !settings.API_KEYS && settings.NODE_ENV !== 'production') {
    const { key, file } = await developmentApiKey(settings.DATA_DIR);
    process.env.API_KEYS = key;
    process.stderr.write(
      `Development API key (API_KEYS is unset): send Authorization: Bearer $(cat ${relative(process.cwd(), file)})\n`,
    );
  }
  await entry();
}
