import { createInterface } from 'node:readline';
import type { DataSource } from 'typeorm';
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
export function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    const lines = createInterface({ input });
    let answered = false;
    lines.once('line', (line) => {
      answered = true;
      lines.close();
      resolve(line);
    });
    lines.once('close', () => answered || resolve(''));
  });
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
      const pending = new Set(await pendingNames(dataSource));
      for (const migration of dataSource.migrations) {
        output.out(`${pending.has(migration.name!) ? '[ ]' : '[X]'} ${migration.name}`);
      }
      return 0;
    }
    case 'revert': {
      const last = await lastApplied(dataSource);
      if (!last) {
        output.err(`No migration is applied on ${database}: nothing to revert.`);
        return 0;
      }
      const drops = last.revertDrops ? `it drops ${last.revertDrops}` : 'it undoes that migration and may drop data';
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

async function appliedNames(dataSource: DataSource): Promise<string[]> {
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  const exists = await dataSource.query<{ exists: boolean }[]>('SELECT to_regclass($1) IS NOT NULL AS "exists"', [
    table,
  ]);
  if (!exists[0].exists) return [];
  const rows: { name: string }[] = await dataSource.query(`SELECT name FROM "${table}" ORDER BY id`);
  return rows.map((row) => row.name);
}

async function pendingNames(dataSource: DataSource): Promise<string[]> {
  const applied = new Set(await appliedNames(dataSource));
  return dataSource.migrations.map((migration) => migration.name!).filter((name) => !applied.has(name));
}

async function lastApplied(dataSource: DataSource): Promise<{ name: string; revertDrops?: string } | null> {
  const names = await appliedNames(dataSource);
  if (names.length === 0) return null;
  const name = names[names.length - 1];
  const known = dataSource.migrations.find((migration) => migration.name === name) as RevertibleMigration | undefined;
  return { name, revertDrops: known?.revertDrops };
}
