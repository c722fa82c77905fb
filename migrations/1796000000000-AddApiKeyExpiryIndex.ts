import type { QueryRunner } from 'typeorm';
import type { RevertibleMigration } from '../src/database/revertible-migration.js';

export class AddApiKeyExpiryIndex1796000000000 implements RevertibleMigration {
  name = 'AddApiKeyExpiryIndex1796000000000';
  transaction = false as const;
  revertDrops = 'no data: only the index "api_keys_live_expires_at_idx"';

  // The expiring-keys gauge counts from it, not by reading every key. Built concurrently: keys are issued meanwhile.
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY "api_keys_live_expires_at_idx" ON "api_keys" ("expires_at") WHERE revoked_at IS NULL AND replaced_by IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS "api_keys_live_expires_at_idx"`);
  }
}
