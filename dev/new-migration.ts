import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module.js';
import { createFastifyAdapter } from '../src/app.setup.js';
import { loadConfig } from '../src/config/app-config.js';
import { ConfigError, Problem } from '../src/config/problem.js';
import { schemaChanges } from './schema-drift.js';
import { oneLine, terminal } from '../src/cli/cli-database.js';
import type { MigrationBody } from './migration-files.js';
import { describeRevertDrops, parseMigrationPath, writeMigration } from './migration-files.js';
import { PACKAGE_ROOT } from '../src/config/package-root.js';
import { loadEmbeddedPostgres } from './load-embedded-postgres.js';
import type { ScratchDatabase } from './scratch-database.js';
import { developmentSettings } from './with-embedded-postgres.js';

export const USAGE = `Usage:
  npm run migration:generate -- migrations/<Name>   write the migration that brings the schema the migrations
                                                    build to what the entities describe (e.g. migrations/AddPetNote)
  npm run migration:create -- migrations/<Name>     write an empty migration to fill in by hand
  npm run migration:create -- migrations/<Name> --no-transaction
                                                    the same, run outside a transaction, for CREATE INDEX
                                                    CONCURRENTLY (docs/development.md)
`;

/** The command, the migration's path and `--no-transaction` (create only), or null for the usage. */
function parseArguments(args: readonly string[]): { command: string; path: string; noTransaction: boolean } | null {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: { 'no-transaction': { type: 'boolean', default: false } },
      allowPositionals: true,
      strict: true,
    });
    const [command, path, ...rest] = positionals;
    const noTransaction = values['no-transaction'];
    if (command !== 'generate' && command !== 'create') return null;
    if (path === undefined || rest.length > 0 || (noTransaction && command !== 'create')) return null;
    return { command, path, noTransaction };
  } catch {
    return null;
  }
}

/**
 * An empty database that is thrown away afterwards, so that nobody's data plays a part: a new database in the
 * server `databaseUrl` names, or, without one, a throw-away embedded cluster (never the one under DATA_DIR).
 */
async function openScratchDatabase(databaseUrl: string | undefined): Promise<ScratchDatabase> {
  return databaseUrl ? scratchDatabaseOn(databaseUrl) : (await loadEmbeddedPostgres()).startScratchCluster();
}

async function scratchDatabaseOn(databaseUrl: string): Promise<ScratchDatabase> {
  const name = `animal_store_scratch_${randomBytes(6).toString('hex')}`;
  const server = new URL(databaseUrl);
  const admin = async (sql: string) => {
    const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
    try {
      await client.connect();
      await client.query(sql);
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  try {
    await admin(`CREATE DATABASE ${name}`);
  } catch (error) {
    throw new Error(
      `no scratch database could be created on ${server.hostname}:${server.port || 5432} (${oneLine(error)}): ` +
        'give the role in DATABASE_URL the CREATEDB privilege, or unset DATABASE_URL to use a throw-away embedded PostgreSQL.',
      { cause: error },
    );
  }
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), close: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * What the migrations leave to do, up and down: the service's own modules (so exactly the entities it registers)
 * on a scratch database, after every migration has been applied to it.
 */
async function pendingChanges(databaseUrl: string | undefined): Promise<MigrationBody> {
  const scratch = await openScratchDatabase(databaseUrl);
  try {
    const config = { ...loadConfig({ DATABASE_URL: scratch.url }), migrationsRun: true, logLevel: 'silent' as const };
    const app = await NestFactory.create(AppModule.forRoot(config), createFastifyAdapter(config), {
      logger: false,
      abortOnError: false,
    });
    await app.init();
    try {
      const { upQueries, downQueries } = await schemaChanges(app.get(DataSource));
      // down() undoes up() from its last statement back.
      const down = [...downQueries].reverse();
      return { up: upQueries, down, revertDrops: describeRevertDrops(down) };
    } finally {
      await app.close();
    }
  } catch (error) {
    throw new Error(
      `the service did not start on a scratch database with every migration applied (${oneLine(error)}): fix the migration or entity named, then generate again.`,
      { cause: error },
    );
  } finally {
    await scratch.close();
  }
}

async function main(args: readonly string[]): Promise<number> {
  const parsed = parseArguments(args);
  if (!parsed) {
    terminal.err(USAGE);
    return 2;
  }
  const { command, path, noTransaction } = parsed;
  const target = parseMigrationPath(path);
  if (target instanceof Problem) {
    terminal.err(target.message);
    return 2;
  }
  const shown = (file: string) => relative(PACKAGE_ROOT, file);
  if (command === 'create') {
    const { file } = await writeMigration(target.name, {
      up: [],
      down: [],
      revertDrops: '',
      outsideTransaction: noTransaction,
    });
    terminal.out(
      `Wrote ${shown(file)} and listed it in migrations/index.ts: write its up(), down() and revertDrops, then run npm test.`,
    );
    if (noTransaction) {
      terminal.out(
        'It runs outside a transaction (transaction = false): one statement each, and it needs a direct connection to PostgreSQL, not PgBouncer in transaction mode.',
      );
    }
    return 0;
  }
  const body = await pendingChanges((await developmentSettings()).DATABASE_URL);
  if (body.up.length === 0) {
    terminal.out(
      'No changes: the migrations already build what the entities describe, so nothing was written. Change an entity first.',
    );
    return 0;
  }
  const { file } = await writeMigration(target.name, body);
  terminal.out(`Wrote ${shown(file)} and listed it in migrations/index.ts:`);
  for (const { query } of body.up) terminal.out(`  ${query.trim().replace(/\s+/g, ' ')}`);
  terminal.out(`Reverting it drops ${body.revertDrops}.`);
  terminal.out('Review it, run npm test, and commit it with the entity change.');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    terminal.err(
      error instanceof ConfigError
        ? `Invalid configuration: ${oneLine(error)}`
        : `migration:${process.argv[2]} failed: ${oneLine(error)}`,
    );
    process.exit(1);
  },
);
