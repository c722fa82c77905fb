import type { QueryRunner } from 'typeorm';
import type { RevertibleMigration } from '../src/database/revertible-migration.js';

export class AddApiKeyLineage1795715030449 implements RevertibleMigration {
  name = 'AddApiKeyLineage1795715030449';
  revertDrops =
    'the "replaced_by" and "lineage_id" columns of "api_keys": which key replaced which (a replaced key can then be rotated again) and the lineages Idempotency-Keys are scoped by (a retry with a replacement key then creates again)';

  // Safe while instances of the previous build run: two nullable columns without a default (a catalogue change, no
  // table rewrite, a brief ACCESS EXCLUSIVE lock), and a foreign key checked against a column that is still empty.
  // The previous build names every column it reads and writes; a key it issues or rotates gets null in both, which
  // reads as the first key of its own lineage, not yet replaced. Existing rows get the same: lineages are kept from
  // the first rotation after this migration on.
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "lineage_id" bigint`);
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "replaced_by" bigint`);
    await queryRunner.query(
      `ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_replaced_by_fkey" FOREIGN KEY ("replaced_by") REFERENCES "api_keys"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_replaced_by_fkey"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "replaced_by"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "lineage_id"`);
  }
}
