import type { DataSource } from 'typeorm';

/**
 * The server-side bounds every request's statements run under, in ms. Commands and migrations override them in
 * their own transactions (`SET LOCAL`, src/database/run-migrations.ts). They are not sent as startup
 * parameters: PgBouncer refuses those (`unsupported startup parameter: statement_timeout`), and with
 * `ignore_startup_parameters` it drops them silently. A `SET` would stay on whichever server connection
 * PgBouncer lent, and a `SET LOCAL` only covers an explicit transaction. Role settings hold both directly and
 * through a pooler in any mode, because PostgreSQL applies them when each server session starts.
 */
export const SESSION_TIMEOUTS = {
  /** A statement running longer is cancelled by the server (SQLSTATE 57014, answered 503). */
  statement_timeout: 5_000,
  /** A transaction left idle longer is ended by the server, releasing its locks. */
  idle_in_transaction_session_timeout: 10_000,
} as const;

/** Key of the transaction-level advisory lock instances take turns on here (run-migrations.ts has its own). */
const SESSION_TIMEOUTS_ADVISORY_LOCK = 0x616e_0001;

/**
 * Makes SESSION_TIMEOUTS the defaults of the connecting role in this database (`ALTER ROLE CURRENT_USER IN
 * DATABASE`, which any role may do for itself) and sets them on the connection that runs it, the one server
 * session that started before the defaults existed. Instances starting together take turns (a
 * transaction-level advisory lock, safe through PgBouncer), and the role is altered only when its
 * settings differ, so a fleet's restarts do not rewrite the catalog each time.
 */
export async function applySessionTimeouts(dataSource: DataSource): Promise<void> {
  const wanted = Object.entries(SESSION_TIMEOUTS).map(([name, ms]) => `${name}=${ms}`);
  const alter = Object.entries(SESSION_TIMEOUTS)
    .map(
      ([name, ms]) =>
        `EXECUTE format('ALTER ROLE %I IN DATABASE %I SET ${name} = ${ms}', current_user, current_database());`,
    )
    .join('\n    ');
  const set = Object.entries(SESSION_TIMEOUTS)
    .map(([name, ms]) => `SET ${name} = ${ms};`)
    .join(' ');
  // One simple-protocol string: one implicit transaction, so PgBouncer runs all of it on one server connection.
  await dataSource.query(`
DO $$
BEGIN
  PERFORM pg_advisory_xact_lock(${SESSION_TIMEOUTS_ADVISORY_LOCK});
  IF NOT coalesce((
    SELECT setconfig @> ARRAY[${wanted.map((entry) => `'${entry}'`).join(', ')}]
    FROM pg_db_role_setting s
    JOIN pg_roles r ON r.oid = s.setrole
    JOIN pg_database d ON d.oid = s.setdatabase
    WHERE r.rolname = current_user AND d.datname = current_database()
  ), false) THEN
    ${alter}
  END IF;
END
$$; ${set}`);
}
