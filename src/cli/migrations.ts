import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { MigrationExecutor } from 'typeorm';
import type { RevertibleMigration } from '../database/revertible-migration.js';
import { revertLastMigration, runMigrations } from '../database/run-migrations.js';
import { describeDatabase, runDatabaseCommand, terminal, when } from './cli-database.js';

// Not TypeORM's CLI, which reverts without a warning, prints stacks and logs a migration's timestamp as its run time.
const USAGE = `Usage: npm run migration:<command>

  migration:run                 apply the pending migrations
  migration:show                list the migrations of this build, applied or pending
  migration:revert [-- --yes]   revert the last applied migration, after confirming (it drops tables with their data)
`;

/** The first line of stdin, or '' at its end (no stdin, as in CI, answers no); leaving the loop closes it. */
async function answer(): Promise<string> {
  for await (const line of createInterface({ input: process.stdin })) return line;
  return '';
}

runDatabaseCommand({
  name: 'migration',
  usage: USAGE,
  parse: (args) => {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { yes: { type: 'boolean', short: 'y' } } });
    } catch {
      return null; // an option other than --yes: the usage
    }
    const [command, ...extra] = parsed.positionals;
    const confirmed = parsed.values.yes === true;
    if (extra.length > 0 || (confirmed && command !== 'revert')) return null;
    return command === 'run' || command === 'show' || command === 'revert' ? { command, confirmed } : null;
  },
  run: async ({ command, confirmed }, dataSource, config) => {
    const database = describeDatabase(new URL(config.databaseUrl));
    const executor = new MigrationExecutor(dataSource);
    if (command === 'run') {
      // Under the advisory lock: runners started together take turns, and the later ones find nothing pending.
      const applied = await runMigrations(dataSource, config);
      terminal.out(
        applied.length === 0
          ? `No pending migrations on ${database}: all ${dataSource.migrations.length} of this build are applied.`
          : `Applied ${applied.map((migration) => migration.name).join(', ')} on ${database} at ${when(new Date())}.`,
      );
      return 0;
    }
    if (command === 'show') {
      const pending = new Set((await executor.getPendingMigrations()).map(({ name }) => name));
      for (const { name } of dataSource.migrations) terminal.out(`${pending.has(name!) ? '[ ]' : '[X]'} ${name}`);
      return 0;
    }
    const [last] = await executor.getExecutedMigrations(); // the newest first
    if (!last) {
      terminal.err(`No migration is applied on ${database}: nothing to revert.`);
      return 0;
    }
    const known = dataSource.migrations.find(({ name }) => name === last.name) as RevertibleMigration | undefined;
    const drops = known?.revertDrops ? `it drops ${known.revertDrops}` : 'it undoes that migration and may drop data';
    terminal.err(`migration:revert reverts ${last.name} on ${database}: ${drops}. This cannot be undone.`);
    if (!confirmed) {
      terminal.err('Type "yes" to revert (or run `npm run migration:revert -- --yes` in scripts):');
      if ((await answer()).trim().toLowerCase() !== 'yes') {
        terminal.err('Nothing reverted.');
        return 1;
      }
    }
    await revertLastMigration(dataSource, config);
    terminal.out(`Reverted ${last.name} on ${database} at ${when(new Date())}.`);
    return 0;
  },
});
