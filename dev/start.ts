import { withEmbeddedPostgres } from './with-embedded-postgres.js';

/** `npm start`: the service (src/main.ts), on the embedded PostgreSQL unless DATABASE_URL is set. */
await withEmbeddedPostgres(() => import('../src/main.js'), { service: true });
