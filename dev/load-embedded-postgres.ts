import { EmbeddedPostgresError } from './embedded-postgres-error.js';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * The embedded PostgreSQL and the scratch databases, or a one-line EmbeddedPostgresError where this install has no
 * binaries. An install without optional dependencies lacks the binaries package; `embedded-postgres` would then
 * crash the process with an unhandled rejection at import, so that package is looked for first (named as
 * `embedded-postgres` names it). `ownSignals`: the caller handles SIGTERM/SIGINT itself (the service drains
 * first), so embedded-postgres's own handlers are taken off again.
 */
export async function loadEmbeddedPostgres(ownSignals = false) {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    await import(`@embedded-postgres/${platform}-${process.arch}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new EmbeddedPostgresError(
      'No embedded PostgreSQL is installed here (an install without optional dependencies): run `npm install`, or set DATABASE_URL to your PostgreSQL.',
    );
  }
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const [embedded, scratch] = await Promise.all([import('./embedded-postgres.js'), import('./scratch-database.js')]);
  // embedded-postgres registers async-exit-hook at import, whose SIGTERM/SIGINT handlers stop every cluster and
  // exit 143 right away, under the requests still running. A caller that drains first takes those two off (and
  // only those); the `exit` handler stays.
  if (ownSignals) {
    for (const signal of SIGNALS) {
      for (const listener of process.listeners(signal)) {
        if (!before.get(signal)!.has(listener)) process.off(signal, listener);
      }
    }
  }
  return { ...embedded, ...scratch };
}
