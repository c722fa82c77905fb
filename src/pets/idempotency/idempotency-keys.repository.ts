import { Injectable } from '@nestjs/common';
import type { Queryable, Statement, UnitOfWork } from '../../database/database.js';

/** Whose key: an API key's lineage (`api_key_id`), so a retry sent with its replacement finds the first response. */
export type IdempotencyScope = { lineage: string; key: string };
export type StoredResponse = { status: number; body: unknown };

export const IDEMPOTENCY_RETENTION_HOURS = 24;
const EXPIRED = `created_at < now() - make_interval(hours => ${IDEMPOTENCY_RETENTION_HOURS})`;

// Every create with an Idempotency-Key runs these: named (src/database/database.ts, Statement).
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

@Injectable()
export class IdempotencyKeysRepository {
  /** Inserts the key unless it exists; while another transaction holds it uncommitted, PostgreSQL waits for it. */
  async claim(manager: UnitOfWork, { lineage, key }: IdempotencyScope, fingerprint: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(CLAIM, [lineage, key, fingerprint]);
    return rows.length === 1;
  }

  /** The stored key; `status` is null while the request that claimed it is still running. */
  async find(manager: UnitOfWork, { lineage, key }: IdempotencyScope) {
    type Row = { fingerprint: string; status: number | null; body: unknown };
    const [row]: (Row | undefined)[] = await manager.query(FIND, [lineage, key]);
    return row;
  }

  async saveResponse(manager: UnitOfWork, { lineage, key }: IdempotencyScope, response: StoredResponse) {
    await manager.query(SAVE_RESPONSE, [lineage, key, response.status, JSON.stringify(response.body)]);
  }

  /** Deletes up to `rows` of the oldest expired keys, by their ctid (from the created_at index): how many it did. */
  async deleteExpired(manager: Queryable, rows: number): Promise<number> {
    // For DELETE, TypeORM's PostgreSQL driver answers [rows, affected count].
    const [, deleted]: [unknown, number] = await manager.query(
      `DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
         SELECT ctid FROM idempotency_keys WHERE ${EXPIRED} ORDER BY created_at LIMIT $1))`,
      [rows],
    );
    return deleted;
  }

  /** When the oldest key was stored (from the created_at index); null: none. */
  async oldestCreatedAt(manager: Queryable): Promise<Date | null> {
    const [row]: { oldest: Date | null }[] = await manager.query(
      'SELECT min(created_at) AS oldest FROM idempotency_keys',
    );
    return row.oldest;
  }
}
