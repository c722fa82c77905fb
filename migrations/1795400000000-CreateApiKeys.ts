import type { QueryRunner } from 'typeorm';
import type { RevertibleMigration } from '../src/database/revertible-migration.js';

export class CreateApiKeys1795400000000 implements RevertibleMigration {
  name = 'CreateApiKeys1795400000000';
  revertDrops = 'the api_keys table: every issued API key (clients using them get 401 until new keys are issued)';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "api_keys" (
        "id" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
        "name" text NOT NULL,
        "prefix" text NOT NULL,
        "digest" text NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "last_used_at" TIMESTAMP WITH TIME ZONE,
        "revoked_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "api_keys_digest_key" UNIQUE ("digest"),
        CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
      )
    `);
    // `revoke <prefix>` looks keys up by their public prefix.
    await queryRunner.query(`CREATE INDEX "api_keys_prefix_idx" ON "api_keys" ("prefix")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "api_keys_prefix_idx"`);
    await queryRunner.query(`DROP TABLE "api_keys"`);
  }
}
