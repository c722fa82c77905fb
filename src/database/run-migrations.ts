import { DataSource, Migration, MigrationExecutor } from 'typeorm';
import { ADVISORY_LOCKS } from './session-timeouts.js';

/**
 * Applies the pending migrations in one transaction that first takes a transaction-level advisory lock:
 * runners started together (several instances, a migrate Job beside an instance) take turns, and each
 * one after the first finds nothing pending. A transaction-level lock is released by COMMIT or ROLLBACK,
 * so it is safe through PgBouncer in transaction mode, where a session-level lock could stay on a server
 * connection lent to someone else. Returns the migrations this runner applied.
 */
export async function runMigrations(dataSource: DataSource): Promise<Migration[]> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.startTransaction();
    await runner.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCKS.migrations]);
    // Given a query runner already in a transaction, the executor reads what was applied and applies the
    // rest inside it, after the lock, and leaves the commit to us.
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'all';
    const applied = await executor.executePendingMigrations();
    await runner.commitTransaction();
    return applied;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  } finally {
    await runner.release();
  }
}
