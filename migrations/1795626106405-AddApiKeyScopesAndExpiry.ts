import type { QueryRunner } from 'typeorm';
import type { RevertibleMigration } from '../src/database/revertible-migration.js';

export class AddApiKeyScopesAndExpiry1795626106405 implements RevertibleMigration {
  name = 'AddApiKeyScopesAndExpiry1795626106405';
  revertDrops =
    'the "expires_at" and "scopes" columns of "api_keys": every key then works for everything, forever (expired, rotated-out and read-only keys included)';

  // Safe while instances of the previous build run: two nullable columns without a default (a catalogue change, no
  // table rewrite, a brief ACCESS EXCLUSIVE lock), nothing renamed or dropped, and the previous build names every
  // column it reads and writes. Existing rows get null: no scopes (every operation) and no expiry.
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "scopes" text array`);
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "expires_at" TIMESTAMP WITH TIME ZONE`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "expires_at"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "scopes"`);
  }
}
