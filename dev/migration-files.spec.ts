import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as prettier from 'prettier';
import { Problem } from '../src/config/problem.js';
import {
  describeRevertDrops,
  indexSource,
  MIGRATIONS_DIRECTORY,
  parseMigrationPath,
  writeMigration,
} from './migration-files.js';

const statements = (...queries: string[]) => queries.map((query) => ({ query }));

describe('parseMigrationPath', () => {
  it('takes migrations/<Name>, or the name alone', () => {
    expect(parseMigrationPath('migrations/AddPetNote')).toEqual({ name: 'AddPetNote' });
    expect(parseMigrationPath('./migrations/AddPetNote')).toEqual({ name: 'AddPetNote' });
    expect(parseMigrationPath('AddPetNote')).toEqual({ name: 'AddPetNote' });
  });

  it('refuses another folder, naming the one to use', () => {
    expect(parseMigrationPath('src/database/migrations/AddPetNote')).toEqual(
      new Problem(
        'Migrations live in migrations/ (the build compiles the ones listed in its index.ts), not in src/database/migrations/: give migrations/AddPetNote.',
      ),
    );
  });

  it('refuses a name that cannot name a class, with an example of one that can', () => {
    expect(parseMigrationPath('migrations/add-pet-note')).toEqual(
      new Problem(
        '"add-pet-note" cannot name a migration: use letters and digits, starting with a capital, that say what changes (e.g. migrations/AddPetNote).',
      ),
    );
  });
});

describe('describeRevertDrops', () => {
  it('names the tables and columns down() drops, with their data', () => {
    expect(describeRevertDrops(statements('ALTER TABLE "pets" DROP COLUMN "note"'))).toBe(
      'the "note" column of "pets", with its values',
    );
    expect(describeRevertDrops(statements('DROP INDEX "public"."notes_idx"', 'DROP TABLE "notes"'))).toBe(
      'the "notes" table, with every row in it',
    );
    expect(describeRevertDrops(statements('ALTER TABLE "pets" ALTER COLUMN "name" TYPE character varying(20)'))).toBe(
      'the values of "pets"."name" that its former type cannot hold',
    );
  });

  it('says that indexes, constraints and defaults hold no data', () => {
    expect(describeRevertDrops(statements('DROP INDEX "public"."pets_name_idx"'))).toBe(
      'no data: only the index "pets_name_idx"',
    );
    expect(
      describeRevertDrops(
        statements(
          'ALTER TABLE "pets" DROP CONSTRAINT "pets_name_key"',
          'ALTER TABLE "pets" ALTER COLUMN "status" DROP DEFAULT',
          'DROP INDEX "pets_name_idx"',
        ),
      ),
    ).toBe(
      'no data: only the constraint "pets_name_key", the default of "pets"."status" and the index "pets_name_idx"',
    );
    expect(describeRevertDrops(statements('ALTER TABLE "pets" ALTER COLUMN "note" SET DEFAULT \'\''))).toBe('no data');
  });

  it('names a statement it does not recognise as it is, for review', () => {
    expect(describeRevertDrops(statements('TRUNCATE "pets"'))).toBe('whatever `TRUNCATE "pets"` removes');
  });
});

describe('migrations/index.ts', () => {
  it('is exactly what the commands write from the folder', async () => {
    const index = join(MIGRATIONS_DIRECTORY, 'index.ts');
    const written = await prettier.format(indexSource(await readdir(MIGRATIONS_DIRECTORY)), {
      ...(await prettier.resolveConfig(index)),
      filepath: index,
    });
    expect(written).toBe(await readFile(index, 'utf8'));
  });
});

describe('writeMigration', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'animal-store-migrations-'));
    await writeFile(join(directory, '1795300000000-CreatePets.ts'), '');
    await writeFile(join(directory, 'index.ts'), '');
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  const body = {
    up: statements('ALTER TABLE "pets" ADD "note" text'),
    down: statements('ALTER TABLE "pets" DROP COLUMN "note"'),
    revertDrops: 'the "note" column of "pets", with its values',
  };

  it('writes the migration formatted as the project formats code, and lists it after the others', async () => {
    const { file, className } = await writeMigration('AddPetNote', body, { directory, now: 1795500000000 });
    expect(file).toBe(join(directory, '1795500000000-AddPetNote.ts'));
    expect(className).toBe('AddPetNote1795500000000');
    const source = await readFile(file, 'utf8');
    expect(source).toBe(
      [
        "import type { QueryRunner } from 'typeorm';",
        "import type { RevertibleMigration } from '../src/database/revertible-migration.js';",
        '',
        'export class AddPetNote1795500000000 implements RevertibleMigration {',
        "  name = 'AddPetNote1795500000000';",
        '  revertDrops = \'the "note" column of "pets", with its values\';',
        '',
        '  async up(queryRunner: QueryRunner): Promise<void> {',
        '    await queryRunner.query(`ALTER TABLE "pets" ADD "note" text`);',
        '  }',
        '',
        '  async down(queryRunner: QueryRunner): Promise<void> {',
        '    await queryRunner.query(`ALTER TABLE "pets" DROP COLUMN "note"`);',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    const settings = await prettier.resolveConfig(join(MIGRATIONS_DIRECTORY, 'index.ts'));
    expect(await prettier.check(source, { ...settings, filepath: file })).toBe(true);
    const index = await readFile(join(directory, 'index.ts'), 'utf8');
    expect(index).toContain("import { AddPetNote1795500000000 } from './1795500000000-AddPetNote.js';");
    expect(index).toContain('export const MIGRATIONS = [CreatePets1795300000000, AddPetNote1795500000000];');
  });

  it('escapes what a template literal would read: backquotes, backslashes and ${', async () => {
    const { file } = await writeMigration(
      'AddComment',
      { ...body, up: statements('COMMENT ON TABLE "pets" IS \'a `b` \\ ${c}\'') },
      { directory },
    );
    expect(await readFile(file, 'utf8')).toContain(
      'await queryRunner.query(`COMMENT ON TABLE "pets" IS \'a \\`b\\` \\\\ \\${c}\'`);',
    );
  });

  it('gives a skeleton a placeholder statement and asks for revertDrops', async () => {
    const { file } = await writeMigration('BackfillNotes', { up: [], down: [], revertDrops: '' }, { directory });
    const source = await readFile(file, 'utf8');
    expect(source).toContain("revertDrops = '';");
    expect(source).toContain('await queryRunner.query(`-- the change, e.g. ALTER TABLE "pets" ADD "note" text`);');
    expect(source).toContain('migration:revert shows it before it reverts.');
  });

  it('gives a skeleton run outside a transaction `transaction = false` and a CREATE INDEX CONCURRENTLY example', async () => {
    const { file } = await writeMigration(
      'AddPetsNameIndex',
      { up: [], down: [], revertDrops: '', outsideTransaction: true },
      { directory },
    );
    const source = await readFile(file, 'utf8');
    expect(source).toContain('  transaction = false as const;\n');
    expect(source).toContain('not PgBouncer in transaction mode');
    expect(source).toContain(
      'await queryRunner.query(`-- e.g. CREATE INDEX CONCURRENTLY "pets_name_idx" ON "pets" ("name")`);',
    );
    expect(source).toContain('await queryRunner.query(`-- e.g. DROP INDEX CONCURRENTLY IF EXISTS "pets_name_idx"`);');
    const plain = await readFile(
      (await writeMigration('BackfillNotes', { up: [], down: [], revertDrops: '' }, { directory })).file,
      'utf8',
    );
    expect(plain).not.toContain('transaction');
  });

  it('stamps a migration after the newest one even if the clock is behind', async () => {
    const { className } = await writeMigration('AddPetNote', body, { directory, now: 1 });
    expect(className).toBe('AddPetNote1795300000001');
  });

  it('refuses a name already used, and writes nothing', async () => {
    await writeMigration('AddPetNote', body, { directory, now: 1795500000000 });
    await expect(writeMigration('AddPetNote', body, { directory, now: 1795600000000 })).rejects.toThrow(Problem);
    expect((await readdir(directory)).sort()).toEqual([
      '1795300000000-CreatePets.ts',
      '1795500000000-AddPetNote.ts',
      'index.ts',
    ]);
  });
});
