import { DataSource } from 'typeorm';
import { driftReport, schemaChanges } from '../dev/schema-drift.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

/**
 * The service's own data source (every entity its modules register) on a database built from the migrations:
 * an entity change without its migration fails here, whether or not a request would notice it.
 */
describe('the migrations and the entities', () => {
  const t = testAppPerBlock();

  it('describe the same schema: TypeORM finds nothing to change on a migrated database', async () => {
    const report = driftReport(await schemaChanges(t.app.get(DataSource)));
    // Thrown rather than only compared, so that the statements and the command print as written, unquoted.
    if (report !== null) throw new Error(report);
    expect(report).toBeNull();
  });
});
