import { Injectable } from '@nestjs/common';
import { hash } from 'node:crypto';
import { databaseFault, LOCK_WAIT_TIMED_OUT } from '../../database/database-faults.js';
import { Database, type Statement, type UnitOfWork } from '../../database/database.js';
import { ApiError } from '../../edge/errors/api-error.js';
import { ErrorCode } from '../../edge/errors/error-code.js';

/** Whose key: an API key's lineage (`api_key_id`), so a retry sent with its replacement finds the first response. */
export type IdempotencyScope = { lineage: string; key: string };
/** `replayed`: the body is the stored response of an earlier request. */
export type IdempotentOutcome<T> = { status: number; body: T; replayed: boolean };

/** How long a request waits for a concurrent request holding the same key; past it, 409. */
const LOCK_WAIT_MS = 2_000;
/** The lock wait ran out: a concurrent request still holds the key (answered 409, not 503). */
const ANSWERED_HERE = [LOCK_WAIT_TIMED_OUT];

// Every create with an Idempotency-Key runs these: named (src/database/database.ts, Statement). While another
// transaction holds the key uncommitted, CLAIM waits for it.
const CLAIM: Statement = {
  name: 'idempotency-claim',
  text: `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_fingerprint) VALUES ($1, $2, $3)
         ON CONFLICT (api_key_id, idempotency_key) DO NOTHING RETURNING 1`,
};
const FIND: Statement = {
  name: 'idempotency-find',
  text: `SELECT request_fingerprint AS fingerprint, response_status AS status, response_body AS body
         FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2`,
};
const SAVE_RESPONSE: Statement = {
  name: 'idempotency-save-response',
  text: `UPDATE idempotency_keys SET response_status = $3, response_body = $4
         WHERE api_key_id = $1 AND idempotency_key = $2`,
};

const IN_PROGRESS = 'A request with this Idempotency-Key is still in progress; retry later.';
const REUSED = 'This Idempotency-Key was already used with a different request body.';
const keyInUse = () => new ApiError(409, ErrorCode.IdempotencyKeyInUse, IN_PROGRESS, { 'Retry-After': '1' });

/** SHA-256 of the body as canonical JSON (keys sorted), so key order and spacing do not count as a change. */
export function requestFingerprint(body: unknown): string {
  const canonical = JSON.stringify(body, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value,
  );
  return hash('sha256', canonical, 'hex');
}

/** A create at most once per (lineage, Idempotency-Key): claim, work and response in one transaction (IETF draft). */
@Injectable()
export class IdempotencyService {
  constructor(private readonly database: Database) {}

  run<T>(
    { lineage, key }: IdempotencyScope,
    body: unknown,
    work: (transaction: UnitOfWork) => Promise<{ status: number; body: T }>,
  ): Promise<IdempotentOutcome<T>> {
    const fingerprint = requestFingerprint(body);
    // A serialization failure or deadlock rolled the whole transaction back: it is safe to run once more.
    return this.database
      .transaction(async (manager) => {
        await manager.query(`SET LOCAL lock_timeout = ${LOCK_WAIT_MS}`);
        const claimed: unknown[] = await manager.query(CLAIM, [lineage, key, fingerprint]);
        if (claimed.length === 1) {
          const response = await work(manager);
          await manager.query(SAVE_RESPONSE, [lineage, key, response.status, JSON.stringify(response.body)]);
          return { ...response, replayed: false };
        }
        type Row = { fingerprint: string; status: number | null; body: unknown };
        const [record]: (Row | undefined)[] = await manager.query(FIND, [lineage, key]);
        // Purged between the two statements, or its request (`status` null) still running: the client may retry.
        if (!record || record.status === null) throw keyInUse();
        if (record.fingerprint !== fingerprint) throw new ApiError(422, ErrorCode.IdempotencyKeyReused, REUSED);
        return { status: record.status, body: record.body as T, replayed: true };
      }, ANSWERED_HERE)
      .catch((error: unknown) => {
        throw databaseFault(error)?.code === LOCK_WAIT_TIMED_OUT ? keyInUse() : error;
      });
  }
}
