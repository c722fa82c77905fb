import type { DataSource } from 'typeorm';
import type { SqlInMemory } from 'typeorm/driver/SqlInMemory.js';

/** What would bring the database to the schema its entities describe: TypeORM's schema builder, logged, not run. */
export function schemaChanges(dataSource: DataSource): Promise<SqlInMemory> {
  return dataSource.driver.createSchemaBuilder().log();
}

/** Null when the migrations build what the entities describe; else the difference and the command that fixes it. */
export function driftReport(changes: SqlInMemory): string | null {
  if (changes.upQueries.length === 0) return null;
  return [
    'The entities differ from the schema the migrations build. A database built from migrations/ still needs:',
    ...changes.upQueries.map((query) => `  ${query.query.trim().replace(/\s+/g, ' ')};`),
    'Write the migration that does it: npm run migration:generate -- migrations/<WhatChanged>, then review and commit it.',
  ].join('\n');
}
