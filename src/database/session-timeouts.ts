import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/** The requests' server-side bounds, in ms: settings of the service's role (docs/operating.md, "PgBouncer"). */
export const SESSION_TIMEOUTS = {
  /** Cancelled by the server past it: SQLSTATE 57014, answered 503. */
  statement_timeout: 5_000,
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
