import { readdir, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import * as prettier from 'prettier';
import { Problem } from '../src/config/problem.js';
import { PACKAGE_ROOT } from '../src/config/package-root.js';

/** Where the migrations live; `index.ts` in it lists them for the build. */
export const MIGRATIONS_DIRECTORY = join(PACKAGE_ROOT, 'migrations');

/** `<timestamp>-<Name>.ts`, holding the class `<Name><timestamp>`. */
const MIGRATION_FILE = /^(\d+)-([A-Z][A-Za-z0-9]*)\.ts$/;
const NAME = /^[A-Z][A-Za-z0-9]*$/;

/** One statement of up() or down(), as TypeORM's schema builder gives it. */
export interface Statement {
  query: string;
  parameters?: unknown[];
}

export interface MigrationBody {
  /** What reverting drops, for `migration:revert`; empty in a skeleton, for its author to fill in. */
  revertDrops: string;
  up: readonly Statement[];
  down: readonly Statement[];
  /** Run outside a transaction (`transaction = false`), as `CREATE INDEX CONCURRENTLY` must be. */
  outsideTransaction?: boolean;
}

/**
 * The name in `migrations/AddPetNote` (or `AddPetNote`), or why it cannot be one. Paths are taken from the
 * project root, where npm runs its scripts.
 */
export function parseMigrationPath(path: string, directory = MIGRATIONS_DIRECTORY): { name: string } | Problem {
  const slash = path.lastIndexOf('/');
  const [folder, name] = slash < 0 ? ['', path] : [path.slice(0, slash), path.slice(slash + 1)];
  if (folder !== '' && resolve(PACKAGE_ROOT, folder) !== directory) {
    return new Problem(
      `Migrations live in ${relative(PACKAGE_ROOT, directory)}/ (the build compiles the ones listed in its index.ts), not in ${folder}/: give ${relative(PACKAGE_ROOT, directory)}/${name}.`,
    );
  }
  if (!NAME.test(name)) {
    return new Problem(
      `"${name}" cannot name a migration: use letters and digits, starting with a capital, that say what changes (e.g. migrations/AddPetNote).`,
    );
  }
  return { name };
}

/** A statement as a line of up() or down(), in a template literal as TypeORM writes them. */
function call(statement: Statement): string {
  const sql = statement.query.trim().replaceAll('\\', '\\\\').replaceAll('`', '\\`').replaceAll('${', '\\${');
  const parameters = statement.parameters?.length ? `, ${JSON.stringify(statement.parameters)}` : '';
  return `    await queryRunner.query(\`${sql}\`${parameters});`;
}

/** What a skeleton's up() and down() hold, for its author to replace. */
const PLACEHOLDERS = {
  inTransaction: {
    up: '-- the change, e.g. ALTER TABLE "pets" ADD "note" text',
    down: '-- what undoes it, e.g. ALTER TABLE "pets" DROP COLUMN "note"',
  },
  outsideTransaction: {
    up: '-- e.g. CREATE INDEX CONCURRENTLY "pets_name_idx" ON "pets" ("name")',
    down: '-- e.g. DROP INDEX CONCURRENTLY IF EXISTS "pets_name_idx"',
  },
};

/** The source of a migration (unformatted: `writeMigration` formats it). */
export function migrationSource(className: string, body: MigrationBody): string {
  const skeleton = body.up.length === 0;
  const placeholder = PLACEHOLDERS[body.outsideTransaction ? 'outsideTransaction' : 'inTransaction'];
  const up = skeleton ? [call({ query: placeholder.up })] : body.up.map(call);
  const down = skeleton ? [call({ query: placeholder.down })] : body.down.map(call);
  return [
    `import type { QueryRunner } from 'typeorm';`,
    `import type { RevertibleMigration } from '../src/database/revertible-migration.js';`,
    ``,
    `export class ${className} implements RevertibleMigration {`,
    `  name = ${JSON.stringify(className)};`,
    ...(body.outsideTransaction
      ? [
          `  // Outside a transaction, statement by statement, as CREATE INDEX CONCURRENTLY must run (it builds the`,
          `  // index while the table takes writes). One statement each: a failure leaves the ones before it applied.`,
          `  // It needs a direct connection to PostgreSQL, not PgBouncer in transaction mode (docs/development.md).`,
          `  transaction = false as const;`,
        ]
      : []),
    ...(skeleton
      ? [
          `  // What down() drops, with the data in it (e.g. 'the "note" column of "pets", with its values'), or`,
          `  // 'no data: only the index "pets_name_idx"'. migration:revert shows it before it reverts.`,
        ]
      : []),
    `  revertDrops = ${JSON.stringify(body.revertDrops)};`,
    ``,
    `  async up(queryRunner: QueryRunner): Promise<void> {`,
    ...up,
    `  }`,
    ``,
    `  async down(queryRunner: QueryRunner): Promise<void> {`,
    ...down,
    `  }`,
    `}`,
    ``,
  ].join('\n');
}

/** `index.ts`: every migration file of the folder, imported in timestamp order. */
export function indexSource(files: readonly string[]): string {
  const migrations = files
    .map((file) => MIGRATION_FILE.exec(file))
    .filter((match) => match !== null)
    .sort((a, b) => a[1].localeCompare(b[1]))
    .map(([file, timestamp, name]) => ({
      module: `./${file.replace(/\.ts$/, '.js')}`,
      className: `${name}${timestamp}`,
    }));
  return [
    '// Written by `npm run migration:generate` and `npm run migration:create` from the files of this folder.',
    ...migrations.map(({ module, className }) => `import { ${className} } from '${module}';`),
    '',
    '/**',
    ' * Every migration, in order. Imported rather than globbed from disk, so every build (`nest build`,',
    ' * `nest start --watch`, the image) carries exactly the migrations it was compiled with; a file missing from',
    ' * this list fails `migrations/index.spec.ts`.',
    ' */',
    `export const MIGRATIONS = [${migrations.map(({ className }) => className).join(', ')}];`,
    '',
  ].join('\n');
}

const unquote = (name: string) => name.replace(/^(?:"[^"]+"\.)?"([^"]+)"$/, '$1');
const IDENTIFIER = '((?:"[^"]+"\\.)?"[^"]+")';

/** Statements of down() that drop data, and how to say what they drop. */
const DROPS_DATA: [RegExp, (...names: string[]) => string][] = [
  [
    new RegExp(`^DROP TABLE (?:IF EXISTS )?${IDENTIFIER}`, 'i'),
    (table) => `the "${table}" table, with every row in it`,
  ],
  [
    new RegExp(`^ALTER TABLE ${IDENTIFIER} DROP COLUMN (?:IF EXISTS )?${IDENTIFIER}`, 'i'),
    (table, column) => `the "${column}" column of "${table}", with its values`,
  ],
  [
    new RegExp(`^ALTER TABLE ${IDENTIFIER} ALTER COLUMN ${IDENTIFIER} TYPE`, 'i'),
    (table, column) => `the values of "${table}"."${column}" that its former type cannot hold`,
  ],
];

/** Statements that drop something holding no data, and how to name it. */
const DROPS_NO_DATA: [RegExp, (...names: string[]) => string][] = [
  [new RegExp(`^DROP INDEX (?:CONCURRENTLY )?(?:IF EXISTS )?${IDENTIFIER}`, 'i'), (index) => `the index "${index}"`],
  [
    new RegExp(`^ALTER TABLE ${IDENTIFIER} DROP CONSTRAINT ${IDENTIFIER}`, 'i'),
    (_, name) => `the constraint "${name}"`,
  ],
  [new RegExp(`^DROP TYPE (?:IF EXISTS )?${IDENTIFIER}`, 'i'), (type) => `the type "${type}"`],
  [
    new RegExp(`^ALTER TABLE ${IDENTIFIER} ALTER COLUMN ${IDENTIFIER} DROP DEFAULT`, 'i'),
    (table, column) => `the default of "${table}"."${column}"`,
  ],
];

/** Statements that drop nothing. */
const DROPS_NOTHING =
  /^(CREATE |ALTER TABLE \S+ (ADD |RENAME |ALTER COLUMN \S+ (SET DEFAULT|SET NOT NULL|DROP NOT NULL))|ALTER TYPE \S+ RENAME |COMMENT ON |(INSERT INTO|DELETE FROM) "typeorm_metadata")/i;

function list(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/**
 * What running `down` drops, for `migration:revert` to say before it reverts: the tables, columns and values
 * lost; or, when it drops only indexes, constraints or defaults, that it drops no data. A statement it does not
 * recognise is named as it is, to be reviewed.
 */
export function describeRevertDrops(down: readonly Statement[]): string {
  const data: string[] = [];
  const noData: string[] = [];
  for (const { query } of down) {
    const sql = query.trim().replace(/\s+/g, ' ');
    const dropsData = DROPS_DATA.find(([pattern]) => pattern.test(sql));
    const dropsNoData = DROPS_NO_DATA.find(([pattern]) => pattern.test(sql));
    if (dropsData) data.push(dropsData[1](...pattern(dropsData[0], sql)));
    else if (dropsNoData) noData.push(dropsNoData[1](...pattern(dropsNoData[0], sql)));
    else if (!DROPS_NOTHING.test(sql)) data.push(`whatever \`${sql}\` removes`);
  }
  if (data.length > 0) return list(data);
  return noData.length > 0 ? `no data: only ${list(noData)}` : 'no data';
}

function pattern(regex: RegExp, sql: string): string[] {
  return regex.exec(sql)!.slice(1).map(unquote);
}

/**
 * Writes `<timestamp>-<name>.ts` into `directory`, formatted as the project formats code, and rewrites the
 * directory's `index.ts` to list it. The timestamp is now, or just after the newest migration if the clock is behind.
 */
export async function writeMigration(
  name: string,
  body: MigrationBody,
  { directory = MIGRATIONS_DIRECTORY, now = Date.now() }: { directory?: string; now?: number } = {},
): Promise<{ file: string; className: string }> {
  const files = await readdir(directory);
  const existing = files.map((file) => MIGRATION_FILE.exec(file)).filter((match) => match !== null);
  const taken = existing.find(([, , other]) => other === name);
  if (taken) {
    throw new Problem(
      `A migration named ${name} exists (${relative(PACKAGE_ROOT, join(directory, taken[0]))}): choose a name that says what this change does.`,
    );
  }
  const timestamp = Math.max(now, ...existing.map(([, stamp]) => Number(stamp) + 1));
  const file = join(directory, `${timestamp}-${name}.ts`);
  const className = `${name}${timestamp}`;
  await writeFile(file, await formatted(file, migrationSource(className, body)), { flag: 'wx' });
  const index = join(directory, 'index.ts');
  await writeFile(index, await formatted(index, indexSource([...files, `${timestamp}-${name}.ts`])));
  return { file, className };
}

/** `source` formatted with Prettier and the project's settings (wherever the file is written), as `npm run format` would. */
async function formatted(file: string, source: string): Promise<string> {
  const settings = await prettier.resolveConfig(join(MIGRATIONS_DIRECTORY, basename(file)));
  return prettier.format(source, { ...settings, filepath: file });
}
