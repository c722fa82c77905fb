import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { withRetries } from '../../database/database-faults.js';
import type { ApiKeyIdentity } from '../api-key-identity.js';
import { ApiKeyEntity } from './api-key.entity.js';

/** What `list` shows: everything but the digest. */
export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface NewApiKeyRow {
  name: string;
  prefix: string;
  digest: string;
}

/**
 * TypeORM's QueryFailedError carries the query's parameters, and an error
 * logged with its properties would print them: here they are key digests.
 */
function redactParameters(error: unknown): never {
  if (error && typeof error === 'object' && 'parameters' in error) {
    error.parameters = ['[redacted]'];
  }
  throw error;
}

const SUMMARY = 'id, name, prefix, created_at AS "createdAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"';

/** The queries the guard and the `apikey` command run, as plain parameterised SQL. */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  /** The identity of the active (not revoked) key with this digest; served by `api_keys_digest_key`. */
  async findActiveByDigest(digest: string): Promise<ApiKeyIdentity | undefined> {
    const rows = await withRetries(() =>
      this.keys.query<ApiKeyIdentity[]>(
        'SELECT id::text AS id, name FROM api_keys WHERE digest = $1 AND revoked_at IS NULL',
        [digest],
      ),
    ).catch(redactParameters);
    return rows[0];
  }

  /** The digests of every active key: one query for all, however many keys are asked about. */
  async findActiveDigests(): Promise<string[]> {
    const rows = await withRetries(() =>
      this.keys.query<{ digest: string }[]>('SELECT digest FROM api_keys WHERE revoked_at IS NULL'),
    );
    return rows.map((row) => row.digest);
  }

  async insert(key: NewApiKeyRow): Promise<ApiKeySummary> {
    const rows = await this.keys
      .query<ApiKeySummary[]>(`INSERT INTO api_keys (name, prefix, digest) VALUES ($1, $2, $3) RETURNING ${SUMMARY}`, [
        key.name,
        key.prefix,
        key.digest,
      ])
      .catch(redactParameters);
    return rows[0];
  }

  findAll(): Promise<ApiKeySummary[]> {
    return this.keys.query(`SELECT ${SUMMARY} FROM api_keys ORDER BY id`);
  }

  /** Keys whose id, or public prefix, is `reference`. */
  findByReference(reference: string): Promise<ApiKeySummary[]> {
    return /^\d{1,18}$/.test(reference)
      ? this.keys.query(`SELECT ${SUMMARY} FROM api_keys WHERE id = $1`, [reference])
      : this.keys.query(`SELECT ${SUMMARY} FROM api_keys WHERE prefix = $1 ORDER BY id`, [reference]);
  }

  /** Revokes the key (a no-op when it already is) and returns it as it now stands. */
  async revoke(id: string): Promise<ApiKeySummary> {
    // For UPDATE, TypeORM's PostgreSQL driver answers [rows, affected count].
    const [rows]: [ApiKeySummary[], number] = await this.keys.query(
      `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${SUMMARY}`,
      [id],
    );
    return rows[0];
  }

  async touch(ids: readonly string[], at: Date): Promise<void> {
    await withRetries(() =>
      this.keys.query(
        'UPDATE api_keys SET last_used_at = $2 WHERE id = ANY($1::bigint[]) AND (last_used_at IS NULL OR last_used_at < $2)',
        [ids, at],
      ),
    );
  }
}
