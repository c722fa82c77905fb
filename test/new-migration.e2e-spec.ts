import { expect } from '@jest/globals';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from 'pg';
import { ensureBuilt, ROOT, run } from './support/built-service.js';

/** `npm run migration:generate` and `migration:create` as built, without the build step of their npm scripts. */
const newMigration = (args: string[], env: Record<string, string> = {}) =>
  run(
    process.execPath,
    [join(ROOT, 'dist', 'src', 'cli', 'new-migration.js'), ...args],
    {
      PATH: process.env.PATH ?? '',
      ...env,
    },
    180_000,
  );
const migrationFiles = () => readdir(join(ROOT, 'migrations'));

async function scratchDatabases(adminUrl: string): Promise<string[]> {
  const sql = new Client({ connectionString: adminUrl });
  await sql.connect();
  try {
    const { rows } = await sql.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'animal_store_scratch_%'",
    );
    return rows.map((row) => row.datname);
  } finally {
    await sql.end();
  }
}

beforeAll(() => ensureBuilt(), 300_000);

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

  it('uses a scratch database in the server DATABASE_URL names, and drops it afterwards', async () => {
    const finished = await newMigration(['generate', 'migrations/NothingChanged'], { DATABASE_URL: adminUrl });
    expect(finished).toMatchObject({ code: 0, stdout: expect.stringMatching(/^No changes: /) });
    expect(await scratchDatabases(adminUrl)).toEqual([]);
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

  it('refuses a path outside migrations/ with the one to give, and a missing name with its usage', async () => {
    const outside = await newMigration(['generate', 'src/database/migrations/AddPetNote']);
    expect(outside).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^Migrations live in migrations\/ .*: give migrations\/AddPetNote\.\n$/),
    });
    const bare = await newMigration(['generate']);
    expect(bare).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('npm run migration:generate -- migrations/<Name>'),
    });
  }, 60_000);
});
