import { DataSource } from 'typeorm';
import { ConfigError, loadConfig } from '../config/app-config.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { embeddedDatabaseUrl } from '../database/embedded-postgres.js';
import { runMigrations } from '../database/run-migrations.js';

/**
 * `npm run migration:run`: the one-shot migrate step (compose `migrate`, the Kubernetes Job). Safe to start
 * several at once: they take turns on an advisory lock and the later ones find nothing to do.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const url = config.databaseUrl ?? (await embeddedDatabaseUrl(config.dataDir, config.embeddedPostgresPort));
  const dataSource = await new DataSource(dataSourceOptions(url)).initialize();
  try {
    const applied = await runMigrations(dataSource);
    process.stdout.write(
      applied.length === 0
        ? 'No migrations pending: the database is up to date.\n'
        : `Applied ${applied.length} migration(s): ${applied.map((migration) => migration.name).join(', ')}\n`,
    );
  } finally {
    await dataSource.destroy();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      error instanceof ConfigError
        ? `Invalid configuration: ${message}\n`
        : `Migrations failed: ${message}. Nothing was applied (they run in one transaction); fix the cause and run it again.\n`,
    );
    process.exit(1);
  },
);
