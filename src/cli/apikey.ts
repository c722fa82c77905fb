import { DataSource } from 'typeorm';
import { ApiKeyEntity } from '../auth/api-keys/api-key.entity.js';
import { ApiKeysRepository } from '../auth/api-keys/api-keys.repository.js';
import { ConfigError, readConfig } from '../config/app-config.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { runMigrations } from '../database/run-migrations.js';
import { CommandOutput, parseArguments, runCommand, USAGE } from './apikey-commands.js';
import { connect, oneLine, openCliDatabase } from './cli-database.js';

const output: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

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
  const config = await readConfig();
  const database = await openCliDatabase(config);
  const dataSource = new DataSource({ ...dataSourceOptions(database.url), entities: [ApiKeyEntity] });
  try {
    await connect(dataSource, config);
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
    output.err(error instanceof ConfigError ? `Invalid configuration: ${oneLine(error)}` : `apikey failed: ${oneLine(error)}`);
    process.exit(1);
  },
);
