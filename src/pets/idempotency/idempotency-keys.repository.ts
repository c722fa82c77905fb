import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * Whose key it is: keys of different API keys never meet, except an API key and its replacements (`lineage`, stored
 * in `api_key_id`: the id of the lineage's first key), so that a retry sent with the new key finds the first response.
 */
export type IdempotencyScope = { lineage: string; key: string };
export type StoredResponse = { status: number; body: unknown };

/** Keys are kept at least this long; the purge deletes older ones. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

@Injectable()
export class IdempotencyKeysRepository {
  /** Inserts the key unless it exists; while another transaction holds it uncommitted, PostgreSQL waits for it. */
  async claim(manager: EntityManager, { lineage, key }: IdempotencyScope, fingerprint: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_fingerprint) VALUES ($1, $2, $3)
       ON CONFLICT (api_key_id, idempotency_key) DO NOTHING RETURNING 1`,
      [lineage, key, fingerprint],
    );
    return rows.length === 1;
  }

  async find(
    manager: EntityManager,
    { lineage, key }: IdempotencyScope,
  ): Promise<{ fingerprint: string; response: StoredResponse | null } | undefined> {
    const [row]: { fingerprint: string; status: number | null; body: unknown }[] = await manager.query(
      `SELECT request_fingerprint AS fingerprint, response_status AS status, response_body AS body
       FROM idempotency_keys WHERE api_key_id = $1 AND idempotency_key = $2`,
      [lineage, key],
    );
    return (
      row && {
        fingerprint: row.fingerprint,
        response: row.status === null ? null : { status: row.status, body: row.body },
      }
    );
  }

  async saveResponse(manager: EntityManager, { lineage, key }: IdempotencyScope, response: StoredResponse) {
    await manager.query(
      `UPDATE idempotency_keys SET response_status = $3, response_body = $4
       WHERE api_key_id = $1 AND idempotency_key = $2`,
      [lineage, key, response.status, JSON.stringify(response.body)],
    );
  }
}
