import { Logger } from '@nestjs/common';
import { setTimeout } from 'node:timers/promises';
import { DataSource, Migration, MigrationExecutor, QueryRunner } from 'typeorm';
import { databaseFault, LOCK_WAIT_TIMED_OUT } from './database-faults.js';

type MigrationLockTimeout = { migrationLockTimeoutMs: number };

export class MigrationLockTimeoutError extends Error {}

/** Runs `work` while another connection holds the runners' lock (docs/operating.md, "Runners take turns"). */
async function underRunLock<T>(
  dataSource: DataSource,
  work: (executor: MigrationExecutor, runner: QueryRunner, lock: QueryRunner) => Promise<T>,
): Promise<T> {
  const lock = dataSource.createQueryRunner();
  const runner = dataSource.createQueryRunner();
  try {
    for (;;) {
      await lock.startTransaction();
      await lock.query('SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL statement_timeout = 0');
      const [{ locked }] = (await lock.query(`SELECT pg_try_advisory_xact_lock(x'616e0002'::int) AS locked`)) as {
        locked: boolean;
      }[];
      if (locked) return await work(new MigrationExecutor(dataSource, runner), runner, lock);
      await lock.rollbackTransaction();
      await setTimeout(500);
    }
  } finally {
    const unlock = lock.isTransactionActive ? lock.rollbackTransaction() : Promise.resolve();
    await Promise.allSettled([runner.release(), unlock.finally(() => lock.release())]);
  }
}

/** Runs `step` (a migration, up or down, and its record) under docs/operating.md's "Bounds of a migration". */
async function withBounds<T>(runner: QueryRunner, inTransaction: boolean, timeoutMs: number, step: () => Promise<T>) {
  const lockTimeout = `lock_timeout = ${Math.trunc(timeoutMs)}`;
  const settings = ['statement_timeout = 0', 'idle_in_transaction_session_timeout = 0', lockTimeout];
  if (inTransaction) {
    // The runner's own manager: the transaction, and so SET LOCAL, is on the connection the migration runs on.
    return runner.manager.transaction(async () => {
      await runner.query(settings.map((setting) => `SET LOCAL ${setting}`).join('; '));
      return step();
    });
  }
  await runner.query(settings.map((setting) => `SET ${setting}`).join('; '));
  try {
    return await step();
  } finally {
    // Back to the role's defaults before the connection serves anything else; a lost connection is not reused.
    await runner.query(settings.map((setting) => `RESET ${setting.split(' ')[0]}`).join('; ')).catch(() => undefined);
  }
}

/** Applies the pending migrations under the runners' lock; returns the ones this runner applied. */
export function runMigrations(dataSource: DataSource, { migrationLockTimeoutMs: lockTimeoutMs }: MigrationLockTimeout) {
  return underRunLock(dataSource, async (executor, runner, lock) => {
    const applied: Migration[] = [];
    for (;;) {
      // Still ours: a lock whose connection was lost would let another runner in.
      await lock.query('SELECT 1');
      const [next] = await executor.getPendingMigrations();
      if (!next) return applied;
      const inTransaction = next.instance?.transaction !== false;
      if (!inTransaction) {
        // A build cut before this run (a failover, a killed Job) left an INVALID index its rerun would trip over.
        const dropped = await dropInvalidIndexes(dataSource, lockTimeoutMs, 'an earlier build left');
        if (dropped) new Logger('Migrations').warn(`Before ${next.name}: ${dropped}.`);
      }
      try {
        await withBounds(runner, inTransaction, lockTimeoutMs, () => executor.executeMigration(next));
      } catch (error) {
        const left = inTransaction
          ? null
          : await dropInvalidIndexes(dataSource, lockTimeoutMs, 'it left').catch(
              () => 'any INVALID index it left is dropped by the next run',
            );
        throw failure(error, next.name, applied, lockTimeoutMs, left);
      }
      applied.push(next);
    }
  });
}

export function revertLastMigration(
  dataSource: DataSource,
  { migrationLockTimeoutMs: timeoutMs }: MigrationLockTimeout,
) {
  return underRunLock(dataSource, async (executor, runner) => {
    const [last] = await executor.getExecutedMigrations();
    const known = last && dataSource.migrations.find((migration) => migration.name === last.name);
    const inTransaction = known?.transaction !== false;
    // In a transaction we start (or none), the executor only runs down() and deletes the record.
    executor.transaction = 'none';
    await withBounds(runner, inTransaction, timeoutMs, () => executor.undoLastMigration()).catch((error: unknown) => {
      throw lockTimeoutExplained(error, timeoutMs, 'nothing was reverted');
    });
  });
}

/** Drops the INVALID indexes a cut `CREATE INDEX CONCURRENTLY` left (in the next run's way); says so, or how to. */
async function dropInvalidIndexes(dataSource: DataSource, lockTimeoutMs: number, whose: string) {
  const runner = dataSource.createQueryRunner();
  try {
    const rows = (await runner.query(
      `SELECT format('%I.%I', n.nspname, c.relname) AS name
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE NOT i.indisvalid AND n.nspname !~ '^pg_'
         AND i.indexrelid NOT IN (SELECT index_relid FROM pg_stat_progress_create_index)`,
    )) as { name: string }[];
    const said: string[] = [];
    for (const { name } of rows) {
      const drop = `DROP INDEX CONCURRENTLY IF EXISTS ${name}`;
      const outcome = await withBounds(runner, false, lockTimeoutMs, () => runner.query(drop)).then(
        () => 'was dropped',
        () => `could not be dropped: run \`${drop}\`, then the migrations again`,
      );
      said.push(`the INVALID index ${name} ${whose} ${outcome}`);
    }
    return said.join('; ');
  } finally {
    await runner.release();
  }
}

const PARTLY_APPLIED = ` It ran outside a transaction (transaction = false): any statement of it before the failing one stays applied, so make each safe to run again.`;

/** `name` failed, leaving `left` (null: it ran in a transaction): one line naming what was applied and what to do. */
function failure(error: unknown, name: string, applied: readonly Migration[], timeoutMs: number, left: string | null) {
  const names = new Intl.ListFormat('en-GB').format(applied.map((migration) => migration.name));
  const were = applied.length === 1 ? 'was' : 'were';
  const after = left === null ? '' : `${left && ` ${left[0].toUpperCase()}${left.slice(1)}.`}${PARTLY_APPLIED}`;
  const outcome = names ? `${names} ${were} applied and recorded, ${name} was not` : 'nothing was applied';
  const explained = lockTimeoutExplained(error, timeoutMs, outcome, ` The migration that stopped: ${name}.${after}`);
  if (explained instanceof MigrationLockTimeoutError) return explained;
  const cause = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  const before = names
    ? `${names} before it ${were} applied and recorded`
    : 'nothing before it was applied in this run';
  return new Error(
    `${name} failed: ${cause}; it is not recorded as applied, and ${before}.${after} ` +
      `Fix ${name}, then run the migrations again: they resume with it.`,
    { cause: error },
  );
}

const RELATION =
  /\b(?:TABLE|ON|INTO|UPDATE|FROM|REFERENCES)\s+(?:ONLY\s+|IF\s+(?:NOT\s+)?EXISTS\s+)?((?:"[^"]+"|\w+)(?:\.(?:"[^"]+"|\w+))?)/i;

/** A lock wait that ran out (SQLSTATE 55P03) as what it means for the operator; any other error as it is. */
function lockTimeoutExplained(error: unknown, timeoutMs: number, outcome: string, more = ''): unknown {
  if (databaseFault(error)?.code !== LOCK_WAIT_TIMED_OUT) return error;
  const query = (error as { query?: unknown }).query;
  const statement = (typeof query === 'string' ? query : '').trim().replace(/\s+/g, ' ');
  const relation = RELATION.exec(statement)?.[1];
  const holders = /\bCONCURRENTLY\b/i.test(statement)
    ? ` (a concurrent index build waits for every older transaction of this database, not only for the table's lock holders; find them, oldest first: SELECT pid, state, xact_start, query FROM pg_stat_activity WHERE datname = current_database() AND xact_start IS NOT NULL AND pid <> pg_backend_pid() ORDER BY xact_start)`
    : relation
      ? ` (find them: SELECT pid, state, xact_start, query FROM pg_stat_activity WHERE pid IN (SELECT pid FROM pg_locks WHERE relation = '${relation.replaceAll("'", "''")}'::regclass AND granted))`
      : '';
  return new MigrationLockTimeoutError(
    `waited ${timeoutMs} ms (MIGRATION_LOCK_TIMEOUT_MS) for ${relation ? `a lock on ${relation}` : 'a lock'}, held by another session, at \`${statement.slice(0, 200)}\`; ` +
      `${outcome}. Let the sessions holding it finish or end them${holders}, then run the migrations again; ` +
      `raise MIGRATION_LOCK_TIMEOUT_MS only if requests on that table may wait that long behind the migration.${more}`,
    { cause: error },
  );
}
