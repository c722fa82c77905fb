import { DataSource } from 'typeorm';
import { ConfigError, readConfig } from '../config/app-config.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import type { CommandOutput } from './apikey-commands.js';
import { connect, oneLine, openCliDatabase } from './cli-database.js';
import { firstLine, parseMigrationArguments, runMigrationCommand, USAGE } from './migration-commands.js';

const output: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** `npm run migration:run | migration:show | migration:revert`, compiled into dist like the service. */
async function main(args: readonly string[]): Promise<number> {
  const command = parseMigrationArguments(args);
  if (!command) {
    output.err(USAGE);
    return 2;
  }
  const config = await readConfig();
  const database = await openCliDatabase(config);
  const dataSource = new DataSource(dataSourceOptions(database.url));
  try {
    await connect(dataSource, config);
    return await runMigrationCommand(command, dataSource, output, () => firstLine(process.stdin));
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const what = error instanceof ConfigError ? 'Invalid configuration' : 'migration failed';
    output.err(`${what}: ${oneLine(error)}`);
    process.exit(1);
  },
);
