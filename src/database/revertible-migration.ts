import type { MigrationInterface } from 'typeorm';

/** A migration that says what reverting it destroys, so `npm run migration:revert` can warn before it does. */
export interface RevertibleMigration extends MigrationInterface {
  name: string;
  /** What `down()` drops, with the data in it, e.g. "the api_keys table: every issued API key". */
  revertDrops: string;
}
