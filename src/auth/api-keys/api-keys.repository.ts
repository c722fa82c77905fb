import { Inject, Injectable } from '@nestjs/common';
import { Database, type Transactional } from '../../database/database.js';
import type { ApiKeyScope } from '../api-key-scope.js';
import type { ApiKeyEntity } from './api-key.entity.js';

/** What `list` shows: everything but the digest; `state` by the database's clock. */
export type ApiKeySummary = Omit<ApiKeyEntity, 'digest' | 'scopes' | 'lineageId' | 'replacedById' | 'replacedBy'> & {
  scopes: ApiKeyScope[] | null;
  replacedBy: string | null;
  state: 'active' | 'in overlap' | 'expired' | 'revoked';
};

/** What the key store needs of a key, revoked and expired ones included (to say why they are refused). */
export type ApiKeyRecord = Pick<ApiKeySummary, 'id' | 'name' | 'scopes' | 'expiresAt' | 'revokedAt' | 'replacedBy'> & {
  lineage: string;
};

/** `expiresInMs`: from now, by the database's clock; null: never. */
type NewApiKeyRow = Pick<ApiKeyEntity, 'name' | 'prefix' | 'digest'> & {
  scopes: readonly ApiKeyScope[] | null;
  expiresInMs: number | null;
};

/** A rotation; or, when the key cannot be rotated (not active), the key as it stands and its replacement, if any. */
export type RotationOutcome =
  | { rotated: true; old: ApiKeySummary; created: ApiKeySummary }
  | { rotated: false; key: ApiKeySummary; replacement: ApiKeySummary | null };

/** TypeORM's QueryFailedError carries the query's parameters, here key digests: never log them. */
function redactParameters(error: unknown): never {
  if (error && typeof error === 'object' && 'parameters' in error) error.parameters = ['[redacted]'];
  throw error;
}

const STATE = `CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN expires_at <= now() THEN 'expired'
  WHEN replaced_by IS NOT NULL THEN 'in overlap' ELSE 'active' END`;
const SUMMARY = `id::text AS id, name, prefix, scopes, created_at AS "createdAt", last_used_at AS "lastUsedAt",
  expires_at AS "expiresAt", revoked_at AS "revokedAt", replaced_by::text AS "replacedBy", ${STATE} AS state`;
/** The id of the lineage's first key, which holds null. */
const LINEAGE = 'coalesce(lineage_id, id)';
const BY_ID = `SELECT ${SUMMARY} FROM api_keys WHERE id = $1`;
const INSERT = `INSERT INTO api_keys (name, prefix, digest, scopes, expires_at)
  VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 millisecond') RETURNING ${SUMMARY}`;
const REVOKE = `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${SUMMARY}`;
const BY_DIGEST = `SELECT id::text AS id, name, scopes, expires_at AS "expiresAt", revoked_at AS "revokedAt",
  ${LINEAGE}::text AS lineage, replaced_by::text AS "replacedBy" FROM api_keys WHERE digest = $1`;

@Injectable()
export class ApiKeysRepository {
  /** The service's Database; a command's EntityManager. */
  constructor(@Inject(Database) private readonly keys: Transactional) {}

  async findByDigest(digest: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.keys.query<ApiKeyRecord[]>(BY_DIGEST, [digest]).catch(redactParameters);
    return rows[0];
  }

  /** Not counted: keys in their overlap (their replacement is) and lineages whose whole life is within the window. */
  async countActiveExpiringWithin(withinMs: number): Promise<number> {
    const rows = await this.keys.query<{ count: number }[]>(
      `SELECT count(*)::int AS count FROM api_keys k
        WHERE revoked_at IS NULL AND replaced_by IS NULL AND expires_at > now()
          AND expires_at <= now() + $1::bigint * interval '1 millisecond'
          AND expires_at - (SELECT created_at FROM api_keys f WHERE f.id = coalesce(k.lineage_id, k.id))
              > $1::bigint * interval '1 millisecond'`,
      [withinMs],
    );
    return rows[0].count;
  }

  async insert({ name, prefix, digest, scopes, expiresInMs }: NewApiKeyRow): Promise<ApiKeySummary> {
    const parameters = [name, prefix, digest, scopes, expiresInMs];
    const rows = await this.keys.query<ApiKeySummary[]>(INSERT, parameters).catch(redactParameters);
    return rows[0];
  }

  /**
   * The replacement inherits name, scopes, lineage and, unless `expiresInMs` says, expiry; the old key expires
   * `overlapMs` from now or sooner. Only an active key is rotated, at most once (its row lock, the conditional UPDATE).
   */
  rotate(id: string, overlapMs: number, replacement: Pick<NewApiKeyRow, 'prefix' | 'digest' | 'expiresInMs'>) {
    return this.keys
      .transaction(async (tx): Promise<RotationOutcome> => {
        const [key]: ApiKeySummary[] = await tx.query(`${BY_ID} FOR UPDATE`, [id]);
        if (key.state !== 'active') {
          const [successor]: ApiKeySummary[] = key.replacedBy === null ? [] : await tx.query(BY_ID, [key.replacedBy]);
          return { rotated: false, key, replacement: successor ?? null };
        }
        const [created]: ApiKeySummary[] = await tx.query(
          `INSERT INTO api_keys (name, prefix, digest, scopes, expires_at, lineage_id)
           SELECT name, $2, $3, scopes,
                  coalesce(now() + $4::bigint * interval '1 millisecond', expires_at), ${LINEAGE}
             FROM api_keys WHERE id = $1 RETURNING ${SUMMARY}`,
          [id, replacement.prefix, replacement.digest, replacement.expiresInMs],
        );
        // For UPDATE, TypeORM's PostgreSQL driver answers [rows, affected count].
        const [old]: [ApiKeySummary[], number] = await tx.query(
          `UPDATE api_keys SET replaced_by = $2,
                  expires_at = least(expires_at, now() + $3::bigint * interval '1 millisecond')
            WHERE id = $1 AND replaced_by IS NULL RETURNING ${SUMMARY}`,
          [id, created.id, overlapMs],
        );
        // Unreachable under the row lock; thrown, it rolls the replacement back.
        if (old.length === 0) throw new Error(`API key ${id} was replaced while it was being rotated: run list.`);
        return { rotated: true, old: old[0], created };
      })
      .catch(redactParameters);
  }

  findAll(): Promise<ApiKeySummary[]> {
    return this.keys.query(`SELECT ${SUMMARY} FROM api_keys ORDER BY id`);
  }

  findByReference(reference: string): Promise<ApiKeySummary[]> {
    const column = /^\d{1,18}$/.test(reference) ? 'id' : 'prefix';
    return this.keys.query(`SELECT ${SUMMARY} FROM api_keys WHERE ${column} = $1 ORDER BY id`, [reference]);
  }

  async revoke(id: string): Promise<ApiKeySummary> {
    const [rows]: [ApiKeySummary[], number] = await this.keys.query(REVOKE, [id]);
    return rows[0];
  }

  /** Sets `last_used_at` where older than `intervalMs`: at most once per interval a row (in no index: a HOT update). */
  async touch(ids: readonly string[], at: Date, intervalMs: number): Promise<void> {
    await this.keys.query(
      `UPDATE api_keys SET last_used_at = $2 WHERE id = ANY($1::bigint[])
          AND (last_used_at IS NULL OR last_used_at <= $2::timestamptz - $3::bigint * interval '1 millisecond')`,
      [ids, at, intervalMs],
    );
  }
}
