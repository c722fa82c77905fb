import { Injectable } from '@nestjs/common';
import type { Queryable } from '../../database/database.js';

export const IDEMPOTENCY_RETENTION_HOURS = 24;
const EXPIRED = `created_at < now() - make_interval(hours => ${IDEMPOTENCY_RETENTION_HOURS})`;

/** The purge's statements (a keyed create's own are the idempotency service's). */
@Injectable()
export class IdempotencyKeysRepository {
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
