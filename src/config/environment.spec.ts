import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { commaList, loadConfig, loadDatabaseConfig, VARIABLES } from './app-config.js';

const read = (file: string) => readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), 'utf8');
/** Variables the documents list that the service does not read: compose's, the tests' and the benchmarks'. */
const OTHER_TOOLS = [
  'POSTGRES_PASSWORD',
  'TEST_DATABASE_URL',
  'TEST_DATABASE',
  'TEST_POSTGRES_IMAGE',
  'FUZZ_RUNS',
  'FUZZ_SEED',
  'BENCH_DATABASE_URL',
];
const DEFAULTS = loadConfig({});

/** The rows of a document's "## Configuration" table: each variable with the default it states (undefined: unset). */
function settingsTable(file: string): { name: string; stated?: string }[] {
  const section = read(file)
    .split(/^## /m)
    .find((part) => part.startsWith('Configuration\n'))!;
  return [...section.matchAll(/^\| (`[A-Z_0-9]+`(?:, `[A-Z_0-9]+`)*) +\| ([^|]*?) +\|/gm)].flatMap(
    ([, names, cell]) => {
      const variables = [...names.matchAll(/`([A-Z_0-9]+)`/g)].map(([, name]) => name);
      const defaults = variables.length === 1 ? [cell] : cell.split(', ');
      return variables.map((name, index) => ({ name, stated: /^`([^`]*)`/.exec(defaults[index] ?? '')?.[1] }));
    },
  );
}

describe('the declaration and the documents', () => {
  const example = read('.env.example');
  const listed = [...example.matchAll(/^#? ?([A-Z][A-Z_0-9]*)=/gm)].map(([, name]) => name);

  it('.env.example lists every variable, and only those of the service and the tools named', () => {
    expect(VARIABLES.filter((name) => !listed.includes(name))).toEqual([]);
    expect(listed.filter((name) => !VARIABLES.includes(name) && !OTHER_TOOLS.includes(name))).toEqual([]);
  });

  it('.env.example sets each variable it sets to its default, so that copying it changes nothing', () => {
    const set = parseEnv(example);
    expect(Object.keys(set).length).toBeGreaterThan(20);
    expect(loadConfig(set)).toEqual(DEFAULTS);
  });

  it.each(['README.md', 'docs/operating.md'])('%s lists declared variables with their defaults', (file) => {
    const rows = settingsTable(file);
    expect(rows.map(({ name }) => name)).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'CURSOR_SECRET']));
    expect(rows.filter(({ name }) => !VARIABLES.includes(name) && !OTHER_TOOLS.includes(name))).toEqual([]);
    for (const { name, stated } of rows.filter((row) => row.stated !== undefined && VARIABLES.includes(row.name))) {
      expect({ name, config: loadConfig({ [name]: stated }) }).toEqual({ name, config: DEFAULTS });
    }
  });

  it('docs/operating.md has a row for every variable', () => {
    const documented = settingsTable('docs/operating.md').map(({ name }) => name);
    expect(VARIABLES.filter((name) => !documented.includes(name))).toEqual([]);
  });
});

describe('commaList: the rule of every comma-separated variable', () => {
  it.each([
    ['a,b', ['a', 'b']],
    [' a , ,b,', ['a', 'b']],
    [' , ', []],
  ])('reads %j as %j', (raw, entries) => {
    expect(commaList(raw)).toEqual(entries);
  });
});

describe('the database part', () => {
  it('is the service configuration narrowed to what the commands read', () => {
    const env = { DATABASE_URL: 'postgres://u:p@h/db', DATABASE_POOL_MAX: '3', DATA_DIR: '/tmp/d', NODE_ENV: 'test' };
    const database = loadDatabaseConfig(env);
    expect(database).toMatchObject({ databaseUrl: env.DATABASE_URL, databasePool: { max: 3 }, dataDir: '/tmp/d' });
    expect(database).not.toHaveProperty('port');
    expect(loadConfig(env)).toMatchObject(database);
  });
});
