import { runDatabaseCommand, terminal } from './cli-database.js';
import { firstLine, parseMigrationArguments, runMigrationCommand, USAGE } from './migration-commands.js';

/** `npm run migration:run | migration:show | migration:revert`, compiled into dist like the service. */
runDatabaseCommand(
  {
    name: 'migration',
    usage: USAGE,
    parse: parseMigrationArguments,
    run: (command, dataSource, config) =>
      runMigrationCommand(command, dataSource, terminal, () => firstLine(process.stdin), config),
  },
  process.argv.slice(2),
);
