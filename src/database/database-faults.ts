/** How Database answers a fault before it is answered 503: not, once more, or until RETRY_DEADLINE_MS. */
type FaultAnswer = 'unavailable' | 'retry-once' | 'retry-until-deadline';

// SQLSTATEs: https://www.postgresql.org/docs/current/errcodes-appendix.html
/** A lock wait that ran out (lock_timeout): its callers that set one answer it themselves. */
export const LOCK_WAIT_TIMED_OUT = '55P03';

/** The one table of database faults (503; no row: a bug, 500): the first row whose SQLSTATE prefix matches wins. */
const DATABASE_FAULTS: readonly { sqlstate: string; kind: string; answer: FaultAnswer }[] = [
  { sqlstate: '08', kind: 'connection failure', answer: 'unavailable' },
  { sqlstate: '57P', kind: 'server shutting down or not accepting connections', answer: 'unavailable' },
  { sqlstate: '57014', kind: 'statement timeout', answer: 'unavailable' },
  { sqlstate: LOCK_WAIT_TIMED_OUT, kind: 'lock wait timed out', answer: 'unavailable' },
  { sqlstate: '53300', kind: 'too many connections', answer: 'retry-until-deadline' },
  { sqlstate: '53', kind: 'insufficient resources (disk full, out of memory)', answer: 'unavailable' },
  { sqlstate: '25006', kind: 'read-only database', answer: 'unavailable' },
  { sqlstate: '40001', kind: 'serialization failure', answer: 'retry-once' },
  { sqlstate: '40P01', kind: 'deadlock', answer: 'retry-once' },
];

/** node-postgres's own failures, before or without a SQLSTATE: the server cannot be reached (class 08). */
const UNREACHABLE_CODES =
  /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EADDRNOTAVAIL|EPIPE)$/;
const UNREACHABLE_MESSAGES: readonly [RegExp, string][] = [
  [/due to connection timeout/i, 'connect timeout'],
  [/Query read timeout/i, 'query timeout'],
  [/Connection terminated|connection error|Connection is not established/i, 'connection lost'],
  // TypeORM releases a transaction's query runner when its connection fails; its next statement fails with these.
  [/Query runner already released|connection provided by a query runner was already released/i, 'connection lost'],
  [/the database system is (starting up|shutting down)/i, 'server starting or stopping'],
];

/** Not a SQLSTATE class: the service's own pool had no connection free (the server may be fine, unlike 08). */
export const POOL_FULL_CLASS = 'pool';
const POOL_FULL_MESSAGE = /timeout exceeded when trying to connect/i;

export const FAULT_CLASSES = [...new Set(DATABASE_FAULTS.map((row) => row.sqlstate.slice(0, 2))), POOL_FULL_CLASS];

/** `code`: the SQLSTATE, or what stands for it (`ECONNREFUSED`); `message`: for the log, never for a client. */
export type DatabaseFault = { code: string; sqlClass: string; kind: string; message: string; answer: FaultAnswer };

/** The row of DATABASE_FAULTS that `error` (a pg error, or TypeORM's QueryFailedError around one) matches, or null. */
export function databaseFault(error: unknown): DatabaseFault | null {
  if (!error || typeof error !== 'object') return null;
  const err = error as { code?: unknown; message?: unknown; driverError?: unknown };
  const inner = databaseFault(err.driverError);
  if (inner) return inner;
  const message = (typeof err.message === 'string' ? err.message : '').split('\n')[0];
  const code = typeof err.code === 'string' ? err.code : '';
  if (UNREACHABLE_CODES.test(code)) return fromRow('08', code, message);
  if (/^[0-9A-Z]{5}$/.test(code)) return fromRow(code, code, message);
  if (POOL_FULL_MESSAGE.test(message)) {
    const kind = 'local connection pool full: no connection was free within the connect timeout';
    return { code: 'POOL_FULL', sqlClass: POOL_FULL_CLASS, kind, message, answer: 'unavailable' };
  }
  const unreachable = UNREACHABLE_MESSAGES.find(([pattern]) => pattern.test(message));
  return unreachable ? fromRow('08', unreachable[1], message) : null;
}

function fromRow(sqlstate: string, code: string, message: string): DatabaseFault | null {
  const rule = DATABASE_FAULTS.find((row) => sqlstate.startsWith(row.sqlstate));
  return rule ? { code, sqlClass: sqlstate.slice(0, 2), kind: rule.kind, message, answer: rule.answer } : null;
}

/** How long a request keeps asking for a connection slot: as long as it may wait for a pooled connection. */
export const RETRY_DEADLINE_MS = 2_000;
