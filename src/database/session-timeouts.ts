import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/**
 * The server-side bounds every request's statements run under, in ms: settings of the service's role in its database,
 * made where the roles are made (compose/roles.sh on animal_store_api, whose values a test holds equal to these; the
 * development and test databases by roleSessionTimeoutsSql). Role settings, not startup parameters (which PgBouncer
 * refuses) nor `SET` (which would stay on whichever server connection PgBouncer lent): PostgreSQL applies them as each
 * server session starts, behind any pooler. Migrations run under bounds of their own (`SET LOCAL`).
 */
export const SESSION_TIMEOUTS = {
  /** A statement running longer is cancelled by the server (SQLSTATE 57014, answered 503). */
  statement_timeout: 5_000,
  /** A transaction left idle longer is ended by the server, releasing its locks. */
  idle_in_transaction_session_timeout: 10_000,
} as const;

/** The statements that give `role` (default: the connected one) SESSION_TIMEOUTS in `database`; run by its setup. */
export function roleSessionTimeoutsSql(database: string, role = 'CURRENT_USER'): string {
  return Object.entries(SESSION_TIMEOUTS)
    .map(([name, ms]) => `ALTER ROLE ${role} IN DATABASE "${database}" SET ${name} = ${ms};`)
    .join(' ');
}

/** Reads (never writes) the session's statement_timeout at start, and says how to set it when the role has none. */
export async function warnWithoutSessionTimeouts(dataSource: DataSource): Promise<void> {
  const [{ statement_timeout }] = await dataSource.query<{ statement_timeout: string }[]>('SHOW statement_timeout');
  if (statement_timeout !== '0') return;
  new Logger('Database').warn(
    'Requests run without a statement timeout: the role in DATABASE_URL has none in this database. Connect as the ' +
      "service's role (animal_store_api, made by compose/roles.sh), or run, as a superuser: " +
      roleSessionTimeoutsSql('<database>', '<role>') +
      ' (docs/operating.md, "Database roles").',
  );
}
