import type { QueryRunner } from 'typeorm';
import type { RevertibleMigration } from '../src/database/revertible-migration.js';

export class AddApiKeyScopesAndExpiry1795626106405 implements RevertibleMigration {
  name = 'AddApiKeyScopesAndExpiry1795626106405';
  revertDrops =
    'the "expires_at" column of "api_keys", with its values and the "scopes" column of "api_keys", with its values';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "scopes" text array`);
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "expires_at" TIMESTAMP WITH TIME ZONE`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "expires_at"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "scopes"`);
  }
}
