import type { QueryRunner } from 'typeorm';
import type { RevertibleMigration } from '../src/database/revertible-migration.js';

export class CreateIdempotencyKeys1795300000001 implements RevertibleMigration {
  name = 'CreateIdempotencyKeys1795300000001';
  revertDrops = 'the idempotency_keys table: the stored answers to retried creates';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The response columns are filled in the same transaction that claims the key,
    // so no other transaction ever sees them empty.
    await queryRunner.query(`
      CREATE TABLE "idempotency_keys" (
        "api_key_id" text NOT NULL,
        "idempotency_key" text NOT NULL,
        "request_fingerprint" text NOT NULL,
        "response_status" smallint,
        "response_body" jsonb,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("api_key_id", "idempotency_key")
      )
    `);
    // Serves the periodic purge of expired keys.
    await queryRunner.query(`CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys" ("created_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "idempotency_keys_created_at_idx"`);
    await queryRunner.query(`DROP TABLE "idempotency_keys"`);
  }
}
