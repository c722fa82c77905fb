import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { withRetries } from '../../database/database-faults.js';
import type { ApiKeyScope } from '../api-key-scope.js';
import { ApiKeyEntity } from './api-key.entity.js';

/** What `list` shows: everything but the digest. */
export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  scopes: ApiKeyScope[] | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** What the guard needs of the key with a digest, revoked and expired ones included (to say why they are refused). */
export interface ApiKeyRecord {
  id: string;
  name: string;
  scopes: ApiKeyScope[] | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

export interface NewApiKeyRow {
  name: string;
  prefix: string;
  digest: string;
  scopes: readonly ApiKeyScope[] | null;
  /** From now, by the database's clock; null: never. */
  expiresInMs: number | null;
}

/** A rotation: the old key as it now stands (its expiry at the end of the overlap) and the new one. */
export interface Rotation {
  old: ApiKeySummary;
  created: ApiKeySummary;
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

const SUMMARY =
  'id, name, prefix, scopes, created_at AS "createdAt", last_used_at AS "lastUsedAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"';
/** Neither revoked nor past its expiry. */
const ACTIVE = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())';

/** The queries the guard and the `apikey` command run, as plain parameterised SQL. */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  /** The key with this digest, whatever its state; served by `api_keys_digest_key`. */
  async findByDigest(digest: string): Promise<ApiKeyRecord | undefined> {
    const rows = await withRetries(() =>
      this.keys.query<ApiKeyRecord[]>(
        'SELECT id::text AS id, name, scopes, expires_at AS "expiresAt", revoked_at AS "revokedAt" FROM api_keys WHERE digest = $1',
        [digest],
      ),
    ).catch(redactParameters);
    return rows[0];
  }

  /** The digests of every active key: one query for all, however many keys are asked about. */
  async findActiveDigests(): Promise<string[]> {
    const rows = await withRetries(() =>
      this.keys.query<{ digest: string }[]>(`SELECT digest FROM api_keys WHERE ${ACTIVE}`),
    );
    return rows.map((row) => row.digest);
  }

  /** How many active keys expire within `withinMs` from now, by the database's clock (keys never expiring do not). */
  async countActiveExpiringWithin(withinMs: number): Promise<number> {
    const rows = await this.keys.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM api_keys
        WHERE ${ACTIVE} AND expires_at <= now() + $1::bigint * interval '1 millisecond'`,
      [withinMs],
    );
    return rows[0].count;
  }

  async insert(key: NewApiKeyRow): Promise<ApiKeySummary> {
    const rows = await this.keys
      .query<ApiKeySummary[]>(
        `INSERT INTO api_keys (name, prefix, digest, scopes, expires_at)
         VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 millisecond') RETURNING ${SUMMARY}`,
        [key.name, key.prefix, key.digest, key.scopes, key.expiresInMs],
      )
      .catch(redactParameters);
    return rows[0];
  }

  /**
   * In one transaction: `replacement` is inserted with the old key's name, scopes and expiry, and the old key
   * expires `overlapMs` from now, or when it already did if that is sooner: a rotation never extends a key. Null
   * when the old key is revoked or expired.
   */
  rotate(
    id: string,
    overlapMs: number,
    replacement: Pick<NewApiKeyRow, 'prefix' | 'digest'>,
  ): Promise<Rotation | null> {
    return this.keys.manager
      .transaction(async (manager) => {
        const found: ApiKeySummary[] = await manager.query(
          `SELECT ${SUMMARY} FROM api_keys WHERE id = $1 AND ${ACTIVE} FOR UPDATE`,
          [id],
        );
        if (found.length === 0) return null;
        const created: ApiKeySummary[] = await manager.query(
          `INSERT INTO api_keys (name, prefix, digest, scopes, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${SUMMARY}`,
          [found[0].name, replacement.prefix, replacement.digest, found[0].scopes, found[0].expiresAt],
        );
        const [old]: [ApiKeySummary[], number] = await manager.query(
          `UPDATE api_keys SET expires_at = least(expires_at, now() + $2::bigint * interval '1 millisecond')
            WHERE id = $1 RETURNING ${SUMMARY}`,
          [id, overlapMs],
        );
        return { old: old[0], created: created[0] };
      })
      .catch(redactParameters);
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
