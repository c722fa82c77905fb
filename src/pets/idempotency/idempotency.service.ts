import { Injectable } from '@nestjs/common';
import { hash } from 'node:crypto';
import { databaseFault, LOCK_WAIT_TIMED_OUT } from '../../database/database-faults.js';
import { Database, type UnitOfWork } from '../../database/database.js';
import { ApiError } from '../../edge/errors/api-error.js';
import { ErrorCode } from '../../edge/errors/error-code.js';
import { IdempotencyKeysRepository, IdempotencyScope, StoredResponse } from './idempotency-keys.repository.js';

/** How long a request waits for a concurrent request holding the same key; past it, 409. */
const LOCK_WAIT_MS = 2_000;
/** The lock wait ran out: a concurrent request still holds the key (answered 409, not 503). */
const ANSWERED_HERE = [LOCK_WAIT_TIMED_OUT];

const IN_PROGRESS = 'A request with this Idempotency-Key is still in progress; retry later.';
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

/** `replayed`: the body is the stored response of an earlier request. */
export type IdempotentOutcome<T> = { status: number; body: T; replayed: boolean };

/** A create at most once per (lineage, Idempotency-Key): claim, work and response in one transaction (IETF draft). */
@Injectable()
export class IdempotencyService {
  constructor(
    private readonly database: Database,
    private readonly keys: IdempotencyKeysRepository,
  ) {}

  run<T>(
    scope: IdempotencyScope,
    body: unknown,
    work: (transaction: UnitOfWork) => Promise<StoredResponse & { body: T }>,
  ): Promise<IdempotentOutcome<T>> {
    const fingerprint = requestFingerprint(body);
    // A serialization failure or deadlock rolled the whole transaction back: it is safe to run once more.
    return this.database
      .transaction(async (manager) => {
        await manager.query(`SET LOCAL lock_timeout = ${LOCK_WAIT_MS}`);
        if (await this.keys.claim(manager, scope, fingerprint)) {
          const response = await work(manager);
          await this.keys.saveResponse(manager, scope, response);
          return { ...response, replayed: false };
        }
        const record = await this.keys.find(manager, scope);
        // Purged between the two statements: the client may simply retry.
        if (!record || record.status === null) throw keyInUse();
        if (record.fingerprint !== fingerprint) {
          throw new ApiError(
            422,
            ErrorCode.IdempotencyKeyReused,
            'This Idempotency-Key was already used with a different request body.',
          );
        }
        return { status: record.status, body: record.body as T, replayed: true };
      }, ANSWERED_HERE)
      .catch((error: unknown) => {
        // The lock timeout set above ran out: a concurrent request still holds the key.
        throw databaseFault(error)?.code === LOCK_WAIT_TIMED_OUT ? keyInUse() : error;
      });
  }
}
