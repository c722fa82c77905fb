import { ApiKeysRepository } from '../auth/api-keys/api-keys.repository.js';
import { runMigrations } from '../database/run-migrations.js';
import { parseArguments, runCommand, USAGE } from './apikey-commands.js';
import { runDatabaseCommand, terminal } from './cli-database.js';

/** `npm run apikey -- <command>` (create, rotate, list, revoke: see `USAGE`), compiled into dist like the service. */
runDatabaseCommand({
  name: 'apikey',
  usage: USAGE,
  parse: parseArguments,
  run: async (command, dataSource, config) => {
    // The same rule as the service: a fresh database gets its tables before the first key.
    if (config.migrationsRun) await runMigrations(dataSource, config);
    return dataSource.transaction((manager) => runCommand(command, new ApiKeysRepository(manager), terminal));
  },
});
