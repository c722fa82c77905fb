import { createInterface } from 'node:readline/promises';
import { type DataSource, MigrationExecutor } from 'typeorm';
import type { RevertibleMigration } from '../database/revertible-migration.js';
import { MigrationLockTimeout, revertLastMigration, runMigrations } from '../database/run-migrations.js';
import type { CommandOutput } from './cli-database.js';

export const USAGE = `Usage: npm run migration:<command>

  migration:run                 apply the pending migrations
  migration:show                list the migrations of this build, applied or pending
  migration:revert [-- --yes]   revert the last applied migration, after confirming (it drops tables with their data)
`;

export type MigrationCommand = { command: 'run' } | { command: 'show' } | { command: 'revert'; confirmed: boolean };

export function parseMigrationArguments(args: readonly string[]): MigrationCommand | null {
  const [command, ...rest] = args;
  if ((command === 'run' || command === 'show') && rest.length === 0) return { command };
  if (command === 'revert' && rest.every((arg) => arg === '--yes' || arg === '-y')) {
    return { command, confirmed: rest.length > 0 };
  }
  return null;
}

/** The first line of `input`, or '' at its end (no stdin, as in CI, answers no). */
export async function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  const lines = createInterface({ input });
  try {
    for await (const line of lines) return line;
    return '';
  } finally {
    lines.close();
  }
}

/** Where the data source points, without its password. */
function describeDatabase(dataSource: DataSource): string {
  const url = new URL(String((dataSource.options as { url?: string }).url));
  return `${url.hostname}:${url.port || 5432}${url.pathname}`;
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Runs one migration command on an initialised data source; resolves to the exit code. Written here rather than
 * through TypeORM's CLI, which reverts without a word of warning, prints stacks, and logs a migration's
 * timestamp as if it were the time it was run.
 */
export async function runMigrationCommand(
  command: MigrationCommand,
  dataSource: DataSource,
  output: CommandOutput,
  answer: () => Promise<string>,
  bounds: MigrationLockTimeout,
): Promise<number> {
  const database = describeDatabase(dataSource);
  const executor = new MigrationExecutor(dataSource);
  switch (command.command) {
    case 'run': {
      // Under the advisory lock: runners started together take turns, and the later ones find nothing pending.
      const applied = await runMigrations(dataSource, bounds);
      output.out(
        applied.length === 0
          ? `No pending migrations on ${database}: all ${dataSource.migrations.length} of this build are applied.`
          : `Applied ${applied.map((migration) => migration.name).join(', ')} on ${database} at ${now()}.`,
      );
      return 0;
    }
    case 'show': {
      const pending = new Set((await executor.getPendingMigrations()).map(({ name }) => name));
      for (const { name } of dataSource.migrations) output.out(`${pending.has(name!) ? '[ ]' : '[X]'} ${name}`);
      return 0;
    }
    case 'revert': {
      // The newest first.
      const [last] = await executor.getExecutedMigrations();
      if (!last) {
        output.err(`No migration is applied on ${database}: nothing to revert.`);
        return 0;
      }
      const known = dataSource.migrations.find(({ name }) => name === last.name) as RevertibleMigration | undefined;
      const drops = known?.revertDrops ? `it drops ${known.revertDrops}` : 'it undoes that migration and may drop data';
      output.err(`migration:revert reverts ${last.name} on ${database}: ${drops}. This cannot be undone.`);
      if (!command.confirmed) {
        output.err('Type "yes" to revert (or run `npm run migration:revert -- --yes` in scripts):');
        if ((await answer()).trim().toLowerCase() !== 'yes') {
          output.err('Nothing reverted.');
          return 1;
        }
      }
      await revertLastMigration(dataSource, bounds);
      output.out(`Reverted ${last.name} on ${database} at ${now()}.`);
      return 0;
    }
  }
}
