import { expect } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildCopyWith, ensureBuilt, ROOT, runBuilt } from './support/built-service.js';
import { withAdmin } from './support/test-database.js';

/** A copy of the build and of migrations/: the generator writes there, never into the checkout. */
let copy: Awaited<ReturnType<typeof buildCopyWith>>;

/** `npm run migration:generate` and `migration:create` as built, without the build step of their npm scripts. */
const newMigration = (args: string[], env: Record<string, string> = {}, root = copy.root) =>
  runBuilt(root, 'dev/new-migration.js', args, env, 180_000);
const migrationFiles = (root = copy.root) => readdir(join(root, 'migrations'));
const checkoutStatus = () =>
  execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  });

const scratchDatabases = (adminUrl: string) =>
  withAdmin(adminUrl, async (sql) => {
    const query = "SELECT datname FROM pg_database WHERE datname LIKE 'animal_store_scratch_%'";
    return (await sql.query<{ datname: string }>(query)).rows.map((row) => row.datname);
  });

beforeAll(async () => {
  await ensureBuilt();
  copy = await buildCopyWith([]);
}, 300_000);
afterAll(() => copy?.remove());

describe('npm run migration:generate', () => {
  const adminUrl = process.env.TEST_DATABASE_ADMIN_URL!;

  it('with nothing running, compares on a throw-away embedded PostgreSQL and says when there is nothing to write', async () => {
    const before = await migrationFiles();
    const finished = await newMigration(['generate', 'migrations/NothingChanged']);
    expect(finished).toMatchObject({
      code: 0,
      stdout:
        'No changes: the migrations already build what the entities describe, so nothing was written. Change an entity first.\n',
      stderr: '',
    });
    expect(await migrationFiles()).toEqual(before);
  }, 180_000);

  it('says what to do when that server cannot give it a scratch database', async () => {
    const finished = await newMigration(['generate', 'migrations/AddPetNote'], {
      DATABASE_URL: 'postgres://nobody:wrong@127.0.0.1:1/animal_store',
    });
    expect(finished.code).toBe(1);
    expect(finished.stderr).toMatch(
      /^migration:generate failed: no scratch database could be created on 127\.0\.0\.1:1 \(.+\): give the role in DATABASE_URL the CREATEDB privilege, or unset DATABASE_URL to use a throw-away embedded PostgreSQL\.\n$/,
    );
  }, 60_000);

  it('refuses a path outside migrations/ with the one to give, a missing name and --no-transaction (migration:create takes it) with the usage', async () => {
    for (const [args, stderr] of [
      [['src/database/migrations/AddPetNote'], /^Migrations live in migrations\/ .*: give migrations\/AddPetNote\.\n$/],
      [[], /npm run migration:generate -- migrations\/<Name>/],
      [['migrations/AddPetsNameIndex', '--no-transaction'], /--no-transaction/],
    ] as const) {
      const finished = await newMigration(['generate', ...args]);
      expect(finished).toMatchObject({ code: 2, stderr: expect.stringMatching(stderr) });
    }
  }, 60_000);

  it('writes what an entity change in progress needs into the migrations it was given, and nothing into the checkout, on a scratch database of the server DATABASE_URL names, dropped afterwards', async () => {
    // The copy's build lacks an index its entities declare, as a build does after an entity change.
    const changed = await buildCopyWith([{ name: 'DropPetsIndex', sql: 'DROP INDEX "pets_status_id_idx"' }]);
    try {
      const before = checkoutStatus();
      const finished = await newMigration(
        ['generate', 'migrations/AddPetsIndex'],
        { DATABASE_URL: adminUrl },
        changed.root,
      );
      expect(finished).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(/^Wrote migrations\/\d+-AddPetsIndex\.ts /),
      });
      const written = (await migrationFiles(changed.root)).find((file) => file.endsWith('-AddPetsIndex.ts'))!;
      expect(await readFile(join(changed.root, 'migrations', written), 'utf8')).toContain(
        'CREATE INDEX "pets_status_id_idx"',
      );
      expect(checkoutStatus()).toEqual(before);
      expect(await readdir(join(ROOT, 'migrations'))).not.toContain(written);
      expect(await scratchDatabases(adminUrl)).toEqual([]);
    } finally {
      await changed.remove();
    }
  }, 180_000);
});

describe('npm run migration:create', () => {
  it('with --no-transaction, writes a migration run outside a transaction, for CREATE INDEX CONCURRENTLY', async () => {
    const finished = await newMigration(['create', 'migrations/AddPetsNameIndex', '--no-transaction']);
    expect(finished).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /^Wrote migrations\/\d+-AddPetsNameIndex\.ts and listed it in migrations\/index\.ts: .+\nIt runs outside a transaction \(transaction = false\): .+ not PgBouncer in transaction mode\.\n$/,
      ),
      stderr: '',
    });
    const written = (await migrationFiles()).find((file) => file.endsWith('-AddPetsNameIndex.ts'))!;
    const source = await readFile(join(copy.root, 'migrations', written), 'utf8');
    expect(source).toContain('transaction = false as const;');
    expect(source).toContain('CREATE INDEX CONCURRENTLY "pets_name_idx" ON "pets" ("name")');
  }, 60_000);
});
