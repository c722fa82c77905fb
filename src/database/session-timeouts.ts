import type { DataSource } from 'typeorm';

/**
 * The server-side bounds every request's statements run under, in ms; migrations override them (`SET LOCAL`). Role
 * settings, not startup parameters (which PgBouncer refuses) nor `SET` (which would stay on whichever server
 * connection PgBouncer lent): PostgreSQL applies them as each server session starts, behind any pooler.
 */
export const SESSION_TIMEOUTS = {
  /** A statement running longer is cancelled by the server (SQLSTATE 57014, answered 503). */
  statement_timeout: 5_000,
  /** A transaction left idle longer is ended by the server, releasing its locks. */
  idle_in_transaction_session_timeout: 10_000,
} as const;

/**
 * Makes SESSION_TIMEOUTS the defaults of the connecting role in this database (any role may alter its own) and sets
 * them on this connection, which started before. Instances starting together take turns on a transaction-level
 * advisory lock (safe through PgBouncer), and the role is altered only when its settings differ.
 */
export async function applySessionTimeouts(dataSource: DataSource): Promise<void> {
  const entries = Object.entries(SESSION_TIMEOUTS);
  const alter = entries.map(
    ([name, ms]) =>
      `EXECUTE format('ALTER ROLE %I IN DATABASE %I SET ${name} = ${ms}', current_user, current_database());`,
  );
  // One simple-protocol string: one implicit transaction, so PgBouncer runs all of it on one server connection.
  await dataSource.query(`
DO $$
BEGIN
  PERFORM pg_advisory_xact_lock(x'616e0001'::int);
  IF NOT coalesce((
    SELECT setconfig @> ARRAY[${entries.map(([name, ms]) => `'${name}=${ms}'`).join(', ')}]
    FROM pg_db_role_setting s
    JOIN pg_roles r ON r.oid = s.setrole
    JOIN pg_database d ON d.oid = s.setdatabase
    WHERE r.rolname = current_user AND d.datname = current_database()
  ), false) THEN
    ${alter.join('\n    ')}
  END IF;
END
$$; ${entries.map(([name, ms]) => `SET ${name} = ${ms};`).join(' ')}`);
}
