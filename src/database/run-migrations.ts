import { DataSource, Migration, MigrationExecutor, QueryRunner } from 'typeorm';
import { databaseFault } from './database-faults.js';
import { commandDataSourceOptions } from './data-source-options.js';

/** Key of the advisory lock migration runners take turns on (session-timeouts.ts has its own). */
export const MIGRATIONS_ADVISORY_LOCK = 0x616e_0002;

/** How often a runner asks again for the lock another runner holds. */
const RUN_LOCK_RETRY_MS = 500;

/** How long a migration waits for each lock, and the variable that sets it. */
export interface MigrationLockTimeout {
  migrationLockTimeoutMs: number;
}

/** A migration failed: one line for the operator, naming what was applied before it, what failed and what to do. */
export class MigrationFailedError extends Error {}

/** A migration stopped waiting for a lock: one line for the operator, naming the table and what to do. */
export class MigrationLockTimeoutError extends MigrationFailedError {}

/**
 * Holds the migrations' advisory lock for a whole run, in a transaction of its own on a connection of its own, so
 * that runners started together (several instances, a migrate Job beside an instance) take turns and the later ones
 * find nothing pending. A transaction-level lock, so it is safe through PgBouncer in transaction mode (the
 * transaction keeps its server connection), and a runner that dies releases it with its connection. The
 * transaction is idle while the migrations run on the other connection: `SET LOCAL` lifts the role's
 * idle-in-transaction bound, and it holds no snapshot then, so a `CREATE INDEX CONCURRENTLY` never waits for it.
 *
 * A runner asks with `pg_try_advisory_xact_lock` and asks again after a pause rather than queueing in
 * `pg_advisory_xact_lock`: a statement blocked there holds a snapshot, which a `CREATE INDEX CONCURRENTLY` of the
 * runner holding the lock waits for, a deadlock PostgreSQL ends by failing the index build. The wait is bounded by
 * nothing: another runner's migrations take as long as they take.
 */
async function takeRunLock(dataSource: DataSource): Promise<QueryRunner> {
  const lock = dataSource.createQueryRunner();
  try {
    for (;;) {
      await lock.startTransaction();
      await lock.query('SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL statement_timeout = 0');
      const [{ locked }] = (await lock.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [
        MIGRATIONS_ADVISORY_LOCK,
      ])) as { locked: boolean }[];
      if (locked) return lock;
      await lock.rollbackTransaction();
      await new Promise((resolve) => setTimeout(resolve, RUN_LOCK_RETRY_MS));
    }
  } catch (error) {
    if (lock.isTransactionActive) await lock.rollbackTransaction().catch(() => undefined);
    await lock.release();
    throw error;
  }
}

async function releaseRunLock(lock: QueryRunner): Promise<void> {
  try {
    if (lock.isTransactionActive) await lock.rollbackTransaction();
  } finally {
    await lock.release();
  }
}

/** Runs `work` with a migration executor on a connection of its own, under the runners' advisory lock. */
async function underRunLock<T>(
  dataSource: DataSource,
  work: (executor: MigrationExecutor, runner: QueryRunner, lock: QueryRunner) => Promise<T>,
): Promise<T> {
  const lock = await takeRunLock(dataSource);
  const runner = dataSource.createQueryRunner();
  try {
    return await work(new MigrationExecutor(dataSource, runner), runner, lock);
  } finally {
    await Promise.allSettled([runner.release(), releaseRunLock(lock)]);
  }
}

/** A migration that runs outside a transaction (`transaction = false`), such as `CREATE INDEX CONCURRENTLY`. */
const outsideTransaction = (migration: { instance?: { transaction?: boolean } }) =>
  migration.instance?.transaction === false;

/**
 * Runs `step` (one migration, up or down, and its record) with the migrations' bounds, which override the role's
 * defaults written for the requests:
 * - no statement timeout (the service writes the requests' bound there, and an older build may have written
 *   another): an index build or a backfill takes as long as it takes;
 * - no idle-in-transaction timeout: a migration may pause between its statements;
 * - each lock waited for at most `migrationLockTimeoutMs`: requests on a table queue behind a DDL statement waiting
 *   for its lock.
 *
 * A migration runs in a transaction of its own, with `SET LOCAL` settings, which end with it and hold through
 * PgBouncer in transaction mode; it commits before the next starts, so the locks it took are held no longer than it
 * runs. One with `transaction = false` runs statement by statement under session settings, reset after it: those
 * need the same server session for all its statements, a direct connection, not PgBouncer in transaction mode.
 */
async function withMigrationBounds<T>(
  runner: QueryRunner,
  inTransaction: boolean,
  { migrationLockTimeoutMs }: MigrationLockTimeout,
  step: () => Promise<T>,
): Promise<T> {
  const settings = [
    'statement_timeout = 0',
    'idle_in_transaction_session_timeout = 0',
    `lock_timeout = ${Math.trunc(migrationLockTimeoutMs)}`,
  ];
  if (!inTransaction) {
    await runner.query(settings.map((setting) => `SET ${setting}`).join('; '));
    try {
      return await step();
    } finally {
      // Back to the role's defaults before the connection serves anything else; a lost connection is not reused.
      await runner
        .query('RESET statement_timeout; RESET idle_in_transaction_session_timeout; RESET lock_timeout')
        .catch(() => undefined);
    }
  }
  await runner.startTransaction();
  try {
    await runner.query(settings.map((setting) => `SET LOCAL ${setting}`).join('; '));
    const result = await step();
    await runner.commitTransaction();
    return result;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  }
}

/**
 * Applies the pending migrations, each in its own transaction (withMigrationBounds), under the runners' lock
 * (takeRunLock); returns the ones this runner applied. A failure leaves the migrations before it applied and
 * recorded, itself not, and says so (MigrationFailedError).
 */
export function runMigrations(dataSource: DataSource, bounds: MigrationLockTimeout): Promise<Migration[]> {
  return underRunLock(dataSource, async (executor, runner, lock) => {
    const applied: Migration[] = [];
    for (;;) {
      // Still ours: a lock whose connection was lost would let another runner in.
      await lock.query('SELECT 1');
      const [next] = await executor.getPendingMigrations();
      if (!next) return applied;
      const alone = outsideTransaction(next);
      const invalidBefore = alone ? await invalidIndexes(runner) : [];
      try {
        await withMigrationBounds(runner, !alone, bounds, () => executor.executeMigration(next));
      } catch (error) {
        const left = alone ? await dropInvalidIndexesLeft(runner, invalidBefore, bounds) : '';
        throw failure(error, next.name, alone, applied, bounds, left);
      }
      applied.push(next);
    }
  });
}

/** Reverts the last applied migration, with the bounds of withMigrationBounds, under the runners' lock. */
export function revertLastMigration(dataSource: DataSource, bounds: MigrationLockTimeout): Promise<void> {
  return underRunLock(dataSource, async (executor, runner) => {
    const [last] = await executor.getExecutedMigrations();
    const known = last && dataSource.migrations.find((migration) => migration.name === last.name);
    const alone = known?.transaction === false;
    // In a transaction we start (or none), the executor only runs down() and deletes the record.
    executor.transaction = 'none';
    try {
      await withMigrationBounds(runner, !alone, bounds, () => executor.undoLastMigration());
    } catch (error) {
      throw lockTimeoutExplained(error, bounds.migrationLockTimeoutMs, 'nothing was reverted');
    }
  });
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

/** The INVALID indexes of this database (a failed or interrupted build), but those another session is building. */
async function invalidIndexes(runner: QueryRunner): Promise<string[]> {
  const rows = (await runner.query(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE NOT i.indisvalid AND i.indexrelid NOT IN (SELECT index_relid FROM pg_stat_progress_create_index)`,
  )) as { name: string }[];
  return rows.map((row) => row.name);
}

/**
 * A `CREATE INDEX CONCURRENTLY` that fails leaves its index behind, INVALID: never used by queries, yet updated by
 * every write, and in the way of running the migration again. Drops those the failed migration left (concurrently,
 * so writes go on), and says so; one that could not be dropped is named with the command that drops it.
 */
async function dropInvalidIndexesLeft(
  runner: QueryRunner,
  before: readonly string[],
  bounds: MigrationLockTimeout,
): Promise<string> {
  const left = (await invalidIndexes(runner).catch(() => [])).filter((name) => !before.includes(name));
  const said: string[] = [];
  for (const name of left) {
    const drop = `DROP INDEX CONCURRENTLY IF EXISTS ${name}`;
    const dropped = await withMigrationBounds(runner, false, bounds, () => runner.query(drop)).then(
      () => true,
      () => false,
    );
    said.push(
      dropped
        ? `the INVALID index ${name} it left was dropped`
        : `it left the INVALID index ${name}, which could not be dropped: run \`${drop}\` before running the migrations again`,
    );
  }
  return said.join('; ');
}

function list(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** The failure of migration `name` as one line: what was applied before it, what it left, and what to do. */
function failure(
  error: unknown,
  name: string,
  alone: boolean,
  applied: readonly Migration[],
  { migrationLockTimeoutMs }: MigrationLockTimeout,
  left: string,
): MigrationFailedError {
  const names = applied.map((migration) => migration.name);
  const were = names.length === 1 ? 'was' : 'were';
  const leftover = left ? ` ${left[0].toUpperCase()}${left.slice(1)}.` : '';
  const partly = alone
    ? ` It ran outside a transaction (transaction = false): any statement of it before the failing one stays applied, so make each safe to run again.`
    : '';
  const outcome =
    names.length === 0 ? 'nothing was applied' : `${list(names)} ${were} applied and recorded, ${name} was not`;
  const explained = lockTimeoutExplained(error, migrationLockTimeoutMs, outcome);
  if (explained instanceof MigrationLockTimeoutError) {
    return new MigrationLockTimeoutError(
      `${explained.message} The migration that stopped: ${name}.${leftover}${partly}`,
      { cause: error },
    );
  }
  const cause = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  const before =
    names.length === 0
      ? 'nothing before it was applied in this run'
      : `${list(names)} before it ${were} applied and recorded`;
  return new MigrationFailedError(
    `${name} failed: ${cause}; it is not recorded as applied, and ${before}.${leftover}${partly} ` +
      `Fix ${name}, then run the migrations again: they resume with it.`,
    { cause: error },
  );
}

const RELATION =
  /\b(?:TABLE|ON|INTO|UPDATE|FROM|REFERENCES)\s+(?:ONLY\s+|IF\s+(?:NOT\s+)?EXISTS\s+)?((?:"[^"]+"|\w+)(?:\.(?:"[^"]+"|\w+))?)/i;

/** A lock wait that ran out (SQLSTATE 55P03) as what it means for the operator; any other error as it is. */
function lockTimeoutExplained(error: unknown, timeoutMs: number, outcome: string): unknown {
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
      `${outcome}. Let the sessions holding it finish or end them${holders}, then run the migrations again; ` +
      'raise MIGRATION_LOCK_TIMEOUT_MS only if requests on that table may wait that long behind the migration.',
    { cause: error },
  );
}
