import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { type EnvironmentPart, loadConfig, loadDatabaseConfig } from './environment.js';

export * from './environment.js';

const LOADERS = { service: loadConfig, database: loadDatabaseConfig } satisfies Record<EnvironmentPart, unknown>;

/**
 * Reads the part of the configuration an entry point uses (the service: `service`; `apikey` and the migration
 * commands: `database`): `envFilePath` (`.env` in the working directory, if there is one) under the real
 * environment, which wins, validated once. Then what the file adds is put into process.env, where the tools the
 * commands run read it. (Node's process.loadEnvFile would write the file into process.env before it is validated.)
 */
export async function readConfig<P extends EnvironmentPart>(
  part: P,
  envFilePath = resolve('.env'),
): Promise<ReturnType<(typeof LOADERS)[P]>> {
  const file = await readFile(envFilePath, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const fromFile = parseEnv(file);
  const config = LOADERS[part]({ ...fromFile, ...process.env }) as ReturnType<(typeof LOADERS)[P]>;
  for (const [name, value] of Object.entries(fromFile)) if (!(name in process.env)) process.env[name] = value;
  return config;
}
