/**
 * What a failure of the database means for the request it failed: the one table of database faults, each row with
 * its answer. `unavailable` is a fault of the database, not of the service: answered 503 `service_unavailable` with
 * `Retry-After` (src/edge/errors/to-api-error.ts), logged once per kind per interval without a stack
 * (DatabaseFaultLog) and counted by SQLSTATE class. Anything that matches no row is a bug: 500, logged with its
 * stack. A new kind of failure gets a row here, not a branch elsewhere.
 *
 * SQLSTATEs: https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
export type FaultAnswer =
  /** 503 with Retry-After. */
  | 'unavailable'
  /** PostgreSQL rolled the transaction back and asks for it to be run again: once (withRetries), then 503. */
  | 'retry-once'
  /**
   * The server has no connection slot left: the work is run again after a growing pause (withRetries), since the
   * pool's own connections free up in a moment; past RETRY_DEADLINE_MS, 503. A crowded server slows requests.
   */
  | 'retry-until-deadline'
  /**
   * A lock wait ran out (`lock_timeout`). A request bounds one lock wait only, on another request's Idempotency-Key:
   * 409 `idempotency_key_in_use`. A migration stops with a line naming the lock (run-migrations.ts).
   */
  | 'lock-wait';

interface FaultRule {
  /** A SQLSTATE, or its first characters (a class: `53`; a subclass: `57P`). The first row that matches wins. */
  sqlstate: string;
  /** What happened, in the words the log line and docs/operating.md use. */
  kind: string;
  answer: FaultAnswer;
}

export const DATABASE_FAULTS: readonly FaultRule[] = [
  { sqlstate: '08', kind: 'connection failure', answer: 'unavailable' },
  { sqlstate: '57P', kind: 'server shutting down or not accepting connections', answer: 'unavailable' },
  { sqlstate: '57014', kind: 'statement timeout', answer: 'unavailable' },
  { sqlstate: '55P03', kind: 'lock wait timed out', answer: 'lock-wait' },
  { sqlstate: '53300', kind: 'too many connections', answer: 'retry-until-deadline' },
  { sqlstate: '53', kind: 'insufficient resources (disk full, out of memory)', answer: 'unavailable' },
  { sqlstate: '25006', kind: 'read-only database', answer: 'unavailable' },
  { sqlstate: '40001', kind: 'serialization failure', answer: 'retry-once' },
  { sqlstate: '40P01', kind: 'deadlock', answer: 'retry-once' },
];

/**
 * Failures node-postgres raises itself, before or without a SQLSTATE: socket and name lookup errors (by `code`; a
 * temporary DNS failure, `EAI_AGAIN`, among them) and its own messages (a dropped connection, the connection or
 * query timeout). They mean the server cannot be reached, so they count as class 08 (connection exception). A full
 * local pool is not one of them (POOL_FULL_CLASS).
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
  'ECONNABORTED',
  'EPIPE',
]);
const UNREACHABLE_MESSAGES: readonly [RegExp, string][] = [
  [/due to connection timeout/i, 'connect timeout'],
  [/Query read timeout/i, 'query timeout'],
  [/Connection terminated|connection error|Connection is not established/i, 'connection lost'],
  // TypeORM releases a transaction's query runner when its connection fails; the transaction's next statement (or
  // its COMMIT, never sent) then fails with one of these.
  [/Query runner already released|connection provided by a query runner was already released/i, 'connection lost'],
  [/the database system is (starting up|shutting down)/i, 'server starting or stopping'],
];

/**
 * Not a SQLSTATE class: the service's own pool had no connection to lend within the connect timeout (pg-pool's
 * "timeout exceeded when trying to connect", every connection busy). The server may be fine; what to look at is
 * `animal_store_db_pool_connections{state="waiting"}` and what holds the connections, so it is counted apart from
 * class 08 (the server cannot be reached).
 */
export const POOL_FULL_CLASS = 'pool';
const POOL_FULL: Pick<DatabaseFault, 'code' | 'sqlClass' | 'kind' | 'answer'> = {
  code: 'POOL_FULL',
  sqlClass: POOL_FULL_CLASS,
  kind: 'local connection pool full: no connection was free within the connect timeout',
  answer: 'unavailable',
};
const POOL_FULL_MESSAGE = /timeout exceeded when trying to connect/i;

/**
 * Every class a request answered 503 for a database fault is counted under: the classes of DATABASE_FAULTS' rows
 * that can end in a 503 (a lock wait ends in a 409), and the full local pool.
 */
export const FAULT_CLASSES: readonly string[] = [
  ...new Set(DATABASE_FAULTS.filter((row) => row.answer !== 'lock-wait').map((row) => row.sqlstate.slice(0, 2))),
  POOL_FULL_CLASS,
];

export interface DatabaseFault {
  /** The SQLSTATE (`53100`), or what stands for it when the driver failed without one (`ECONNREFUSED`). */
  code: string;
  /** The SQLSTATE class (`53`); `08` for the driver's own connection failures; POOL_FULL_CLASS for a full pool. */
  sqlClass: string;
  kind: string;
  /** PostgreSQL's (or the driver's) own message: for the log, never for a client. */
  message: string;
  answer: FaultAnswer;
}

interface DriverError {
  code?: unknown;
  message?: unknown;
  driverError?: unknown;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** Each error is classified once, however many places (the retry path, the filter) ask about it. */
const classified = new WeakMap<object, DatabaseFault | null>();

/** The row of DATABASE_FAULTS that `error` (a pg error, or TypeORM's QueryFailedError around one) matches, or null. */
export function databaseFault(error: unknown): DatabaseFault | null {
  if (!error || typeof error !== 'object') return null;
  let fault = classified.get(error);
  if (fault === undefined) classified.set(error, (fault = classify(error)));
  return fault;
}

function classify(err: DriverError): DatabaseFault | null {
  const inner = err.driverError ? databaseFault(err.driverError) : null;
  if (inner) return inner;
  const message = typeof err.message === 'string' ? err.message : '';
  const code = typeof err.code === 'string' ? err.code : '';
  if (UNREACHABLE_CODES.has(code)) return fromRow('08', code, message);
  if (SQLSTATE.test(code)) return fromRow(code, code, message);
  if (POOL_FULL_MESSAGE.test(message)) return { ...POOL_FULL, message: message.split('\n')[0] };
  const said = UNREACHABLE_MESSAGES.find(([pattern]) => pattern.test(message));
  return said ? fromRow('08', said[1], message) : null;
}

function fromRow(sqlstate: string, code: string, message: string): DatabaseFault | null {
  const rule = DATABASE_FAULTS.find((row) => sqlstate.startsWith(row.sqlstate));
  if (!rule) return null;
  return {
    code,
    sqlClass: sqlstate.slice(0, 2),
    kind: rule.kind,
    message: message.split('\n')[0],
    answer: rule.answer,
  };
}

/** How long a request keeps asking for a connection slot: as long as it may wait for a pooled connection. */
export const RETRY_DEADLINE_MS = 2_000;
/** The longest pause between two tries; each is a random part of a growing bound, so waiting requests spread out. */
const MAX_PAUSE_MS = 100;
/** Requests paused for a connection slot, oldest first. */
const paused = new Set<() => void>();

/**
 * One of the pool's own connections is free again (pg-pool's `release` event): the paused requests try at once,
 * oldest first, rather than lose it to a request that has just arrived.
 */
export function connectionReleased(): void {
  for (const wake of [...paused]) wake();
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      paused.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    paused.add(wake);
  });
}

/**
 * The service's one retry path, around a whole unit of work (a statement, or a transaction PostgreSQL rolled back
 * entirely): a serialization failure or deadlock is run once more, and a server without a free connection slot is
 * asked again after a pause until RETRY_DEADLINE_MS. The last failure is answered like any fault (503).
 */
export async function withRetries<T>(work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RETRY_DEADLINE_MS;
  let conflicts = 0;
  for (let tries = 1; ; tries++) {
    try {
      return await work();
    } catch (error) {
      const answer = databaseFault(error)?.answer;
      if (answer === 'retry-once' && conflicts++ === 0) continue;
      if (answer !== 'retry-until-deadline') throw error;
      const wait = Math.random() * Math.min(MAX_PAUSE_MS, 10 * 2 ** tries);
      if (Date.now() + wait >= deadline) throw error;
      await pause(wait);
    }
  }
}
