import type { QueryRunner } from 'typeorm';
import type { RevertibleMigration } from '../src/database/revertible-migration.js';

export class SetApiKeysFillfactor1796000000001 implements RevertibleMigration {
  name = 'SetApiKeysFillfactor1796000000001';
  revertDrops = 'no data: the free space "api_keys" pages keep for updates';

  // Room on each page for a row's next version, so that writing last_used_at (in no index) stays a HOT update.
  // Only a setting (a brief lock, no rewrite): pages written from now on keep the room.
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" SET (fillfactor = 90)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" RESET (fillfactor)`);
  }
}
