import type { QueryRunner } from 'typeorm';
import type { RevertibleMigration } from '../src/database/revertible-migration.js';

export class CreatePets1795300000000 implements RevertibleMigration {
  name = 'CreatePets1795300000000';
  revertDrops = 'the pets table: every animal in the store';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "pets" (
        "id" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
        "name" text NOT NULL,
        "category_id" bigint NOT NULL,
        "status" text NOT NULL DEFAULT 'available',
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "pets_status_check" CHECK ("status" IN ('available', 'pending', 'sold')),
        CONSTRAINT "pets_pkey" PRIMARY KEY ("id")
      )
    `);
    // Serves `WHERE status = $1 ORDER BY id LIMIT $n` (and keyset pages after an id) as an index range scan.
    await queryRunner.query(`CREATE INDEX "pets_status_id_idx" ON "pets" ("status", "id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "pets_status_id_idx"`);
    await queryRunner.query(`DROP TABLE "pets"`);
  }
}
