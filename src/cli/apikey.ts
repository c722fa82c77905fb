import { DataSource } from 'typeorm';
import { ApiKeyEntity } from '../auth/api-keys/api-key.entity.js';
import { ApiKeysRepository } from '../auth/api-keys/api-keys.repository.js';
import { AppConfig, ConfigError, loadConfig } from '../config/app-config.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { openEmbeddedDatabase } from '../database/embedded-postgres.js';
import { runMigrations } from '../database/run-migrations.js';
import { CommandOutput, parseArguments, runCommand, USAGE } from './apikey-commands.js';

const output: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** DATABASE_URL, or the embedded cluster under DATA_DIR (started for this command if the service is not running). */
async function openDatabase(config: AppConfig): Promise<{ url: string; close(): Promise<void> }> {
  if (config.databaseUrl) return { url: config.databaseUrl, close: () => Promise.resolve() };
  return openEmbeddedDatabase({ dataDir: config.dataDir, port: config.embeddedPostgresPort });
}

/**
 * `npm run apikey -- create <name> | list | revoke <id|prefix>`: compiled
 * into dist like the service, so it also runs in the production image.
 */
async function main(args: readonly string[]): Promise<number> {
  const command = parseArguments(args);
  if (!command) {
    output.err(USAGE);
    return 2;
  }
  const config = loadConfig();
  const database = await openDatabase(config);
  const dataSource = new DataSource({ ...dataSourceOptions(database.url), entities: [ApiKeyEntity] });
  try {
    await dataSource.initialize();
    // The same rule as the service: a fresh database gets its tables before the first key.
    if (config.migrationsRun) await runMigrations(dataSource);
    return await runCommand(command, new ApiKeysRepository(dataSource.getRepository(ApiKeyEntity)), output);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    output.err(error instanceof ConfigError ? `Invalid configuration: ${message}` : `apikey failed: ${message}`);
    process.exit(1);
  },
);
