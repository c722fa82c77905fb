import { withEmbeddedPostgres } from './with-embedded-postgres.js';

/** `npm run migration:run|show|revert`: src/cli/migrations.ts, on the embedded PostgreSQL unless DATABASE_URL is set. */
await withEmbeddedPostgres(() => import('../src/cli/migrations.js'));
