import { withEmbeddedPostgres } from './with-embedded-postgres.js';

/** `npm run apikey`: src/cli/apikey.ts, on the embedded PostgreSQL unless DATABASE_URL is set. */
await withEmbeddedPostgres(() => import('../src/cli/apikey.js'));
