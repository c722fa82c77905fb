import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { IdempotencyKeyEntity } from './idempotency-key.entity.js';

/**
 * Whose key it is: keys of different API keys never meet, except an API key and its replacements (a rotation's
 * lineage, ApiKeyIdentity.lineage), so that a retry sent with the new key finds the first response.
 */
export interface IdempotencyScope {
  /** Stored in `api_key_id`: the id of the lineage's first key, which is the key's own id until it is rotated. */
  lineage: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

export interface IdempotencyRecord {
  fingerprint: string;
  response: StoredResponse | null;
}

/** Keys are kept at least this long; the purge deletes older ones. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

@Injectable()
export class IdempotencyKeysRepository {
  constructor(@InjectRepository(IdempotencyKeyEntity) private readonly keys: Repository<IdempotencyKeyEntity>) {}

  /**
   * Inserts the key, or does nothing if it exists. While another transaction
   * holds the same key uncommitted, PostgreSQL makes this statement wait for it.
   */
  async claim(manager: EntityManager, scope: IdempotencyScope, fingerprint: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_fingerprint) VALUES ($1, $2, $3)
       ON CONFLICT (api_key_id, idempotency_key) DO NOTHING RETURNING 1`,
      [scope.lineage, scope.key, fingerprint],
    );
    return rows.length === 1;
  }

  async find(manager: EntityManager, scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const rows: { request_fingerprint: string; response_status: number | null; response_body: unknown }[] =
      await manager.query(
        `SELECT request_fingerprint, response_status, response_body FROM idempotency_keys
         WHERE api_key_id = $1 AND idempotency_key = $2`,
        [scope.lineage, scope.key],
      );
    const row = rows[0];
    if (!row) return undefined;
    return {
      fingerprint: row.request_fingerprint,
      response: row.response_status === null ? null : { status: row.response_status, body: row.response_body },
    };
  }

  async saveResponse(manager: EntityManager, scope: IdempotencyScope, response: StoredResponse): Promise<void> {
    await manager.query(
      `UPDATE idempotency_keys SET response_status = $3, response_body = $4
       WHERE api_key_id = $1 AND idempotency_key = $2`,
      [scope.lineage, scope.key, response.status, JSON.stringify(response.body)],
    );
  }

  /** Deletes keys older than the retention period; returns how many. */
  async purgeExpired(): Promise<number> {
    const [, count]: [unknown, number] = await this.keys.query(
      `DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`,
      [IDEMPOTENCY_RETENTION_HOURS],
    );
    return count;
  }
}
