import type { DataSource } from 'typeorm';
import type { SqlInMemory } from 'typeorm/driver/SqlInMemory.js';

/** The command that writes the missing migration, as a developer types it. */
export const GENERATE_MIGRATION = 'npm run migration:generate -- migrations/<WhatChanged>';

/**
 * What would bring the database of `dataSource` to the schema its entities describe, up and down: TypeORM's
 * schema builder, logged rather than run. On a database built from the migrations, nothing means no drift.
 */
export function schemaChanges(dataSource: DataSource): Promise<SqlInMemory> {
  return dataSource.driver.createSchemaBuilder().log();
}

/** Null when the migrations build what the entities describe; else the difference and the command that fixes it. */
export function driftReport(changes: SqlInMemory): string | null {
  if (changes.upQueries.length === 0) return null;
  return [
    'The entities differ from the schema the migrations build. A database built from migrations/ still needs:',
    ...changes.upQueries.map((query) => `  ${query.query.trim().replace(/\s+/g, ' ')};`),
    `Write the migration that does it: ${GENERATE_MIGRATION}, then review and commit it.`,
  ].join('\n');
}
