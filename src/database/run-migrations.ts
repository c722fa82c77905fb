import { DataSource, Migration, MigrationExecutor } from 'typeorm';
import { databaseFault } from './database-faults.js';
import { commandDataSourceOptions } from './data-source-options.js';

/** Key of the transaction-level advisory lock migration runners take turns on (session-timeouts.ts has its own). */
export const MIGRATIONS_ADVISORY_LOCK = 0x616e_0002;

/** How long a migration waits for each lock, and the variable that sets it. */
export interface MigrationLockTimeout {
  migrationLockTimeoutMs: number;
}

/** A migration stopped waiting for a lock: one line for the operator, naming the table and what to do. */
export class MigrationLockTimeoutError extends Error {}

/**
 * Runs `work` with the migration executor in one transaction: the pending migrations apply all or nothing, and
 * runners started together (several instances, a migrate Job beside an instance) take turns on a
 * transaction-level advisory lock, which COMMIT or ROLLBACK releases, so it is safe through PgBouncer in
 * transaction mode. Every setting is `SET LOCAL`, which also holds through PgBouncer and ends with the
 * transaction:
 * - no statement timeout, whatever the role's default (the service writes the requests' bound there, and an older
 *   build may have written another): an index build or a backfill takes as long as it takes;
 * - after the advisory lock (whose wait is another runner's whole run), each lock is waited for at most
 *   `migrationLockTimeoutMs`: requests on a table queue behind a DDL statement waiting for its lock.
 */
async function inMigrationTransaction<T>(
  dataSource: DataSource,
  { migrationLockTimeoutMs }: MigrationLockTimeout,
  work: (executor: MigrationExecutor) => Promise<T>,
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.startTransaction();
    await runner.query('SET LOCAL statement_timeout = 0');
    await runner.query('SELECT pg_advisory_xact_lock($1)', [MIGRATIONS_ADVISORY_LOCK]);
    await runner.query(`SET LOCAL lock_timeout = ${Math.trunc(migrationLockTimeoutMs)}`);
    // Given a query runner already in a transaction, the executor works inside it and leaves the commit to us.
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'all';
    const result = await work(executor);
    await runner.commitTransaction();
    return result;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    throw lockTimeoutExplained(error, migrationLockTimeoutMs);
  } finally {
    await runner.release();
  }
}

/** Applies the pending migrations (inMigrationTransaction); returns the ones this runner applied. */
export function runMigrations(dataSource: DataSource, bounds: MigrationLockTimeout): Promise<Migration[]> {
  return inMigrationTransaction(dataSource, bounds, (executor) => executor.executePendingMigrations());
}

/** Reverts the last applied migration (inMigrationTransaction). */
export function revertLastMigration(dataSource: DataSource, bounds: MigrationLockTimeout): Promise<void> {
  return inMigrationTransaction(dataSource, bounds, (executor) => executor.undoLastMigration());
}

/**
 * Applies the pending migrations at the service's start (MIGRATIONS_RUN) on a data source of their own: the
 * service's pool bounds each query on the client side, which a long migration must not meet.
 */
export async function runMigrationsAt(url: string, bounds: MigrationLockTimeout): Promise<Migration[]> {
  const dataSource = await new DataSource(commandDataSourceOptions(url)).initialize();
  try {
    return await runMigrations(dataSource, bounds);
  } finally {
    await dataSource.destroy();
  }
}

const RELATION =
  /\b(?:TABLE|ON|INTO|UPDATE|FROM|REFERENCES)\s+(?:ONLY\s+|IF\s+(?:NOT\s+)?EXISTS\s+)?((?:"[^"]+"|\w+)(?:\.(?:"[^"]+"|\w+))?)/i;

/** A lock wait that ran out (SQLSTATE 55P03) as what it means for the operator; any other error as it is. */
function lockTimeoutExplained(error: unknown, timeoutMs: number): unknown {
  if (databaseFault(error)?.answer !== 'lock-wait') return error;
  const query = (error as { query?: unknown }).query;
  const statement = (typeof query === 'string' ? query : '').trim().replace(/\s+/g, ' ');
  const relation = RELATION.exec(statement)?.[1];
  const what = relation ? `a lock on ${relation}` : 'a lock';
  const holders = relation
    ? ` (find them: SELECT pid, state, xact_start, query FROM pg_stat_activity WHERE pid IN (SELECT pid FROM pg_locks WHERE relation = '${relation.replaceAll("'", "''")}'::regclass AND granted))`
    : '';
  return new MigrationLockTimeoutError(
    `waited ${timeoutMs} ms (MIGRATION_LOCK_TIMEOUT_MS) for ${what}, held by another session, at \`${statement.slice(0, 200)}\`; ` +
      `nothing was applied. Let the sessions holding it finish or end them${holders}, then run the migrations again; ` +
      'raise MIGRATION_LOCK_TIMEOUT_MS only if requests on that table may wait that long behind the migration.',
    { cause: error },
  );
}
