import { expect } from '@jest/globals';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '../migrations/index.js';
import { freePort } from './support/database-server.js';
import { ensureBuilt, Finished, ROOT, run } from './support/built-service.js';
import { applied } from './support/database-migrations.js';
import { startService } from './support/service-process.js';
import { createTestDatabase, TestDatabase } from './support/test-database.js';

// The built service and commands as processes: what `nest start` compiles, `.env`, production mode, migration:revert.
// Those of dev/, on the embedded PostgreSQL: test/embedded-postgres-recovery.e2e-spec.ts.

/** The newest migration and the one before it, whichever they are: adding a migration changes no test. */
const [previous, last] = MIGRATIONS.slice(-2).map((migration) => new migration());
const KEY = 'entry-points-key-0123456789';

type Env = Record<string, string>;
const withPath = (env: Env) => ({ PATH: process.env.PATH ?? '', ...env });
const node = (script: string, args: string[], env: Env, options: Parameters<typeof run>[4] = {}, timeoutMs = 120_000) =>
  run(process.execPath, [join(ROOT, 'dist', 'src', script), ...args], withPath(env), timeoutMs, options);
/**
 * The service, expected to refuse to start: should it start instead, it listens on a port of its own on 127.0.0.1
 * and is killed well within the test's time, which then fails on its exit code.
 */
const refusedService = (env: Env) => node('main.js', [], { HOST: '127.0.0.1', PORT: '0', ...env }, {}, 15_000);
/** The service and the commands, each with arguments that reach the database. */
const COMMANDS = [
  ['main.js', []],
  ['cli/apikey.js', ['list']],
  ['cli/migrations.js', ['run']],
] as const;

/** A command that failed in exactly one line on stderr, never `undefined`, never a stack. */
function expectOneLineFailure(finished: Finished, start: string): string {
  expect(finished.code).toBe(1);
  expect(finished.stderr.split('\n').filter(Boolean)).toEqual([expect.stringMatching(new RegExp(`^${start}`))]);
  expect(finished.stderr).not.toMatch(/undefined|\n\s+at /);
  return finished.stderr.trim();
}

let scratch: string;
/** Migrated by the production commands, then reverted by migration:revert. */
let commandsDatabase: TestDatabase;
let commandsSql: Client;
const lastApplied = async () => (await applied(commandsSql)).at(-1);
beforeAll(async () => {
  await ensureBuilt();
  scratch = await mkdtemp(join(tmpdir(), 'animal-store-entry-'));
  commandsDatabase = await createTestDatabase();
  commandsSql = new Client({ connectionString: commandsDatabase.url });
  await commandsSql.connect();
}, 300_000);
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
  await commandsSql.end();
  await commandsDatabase.drop();
});

describe('what `nest start` compiles (src/ and migrations/, as start:dev and the image do), and .env', () => {
  let database: TestDatabase;
  let directory: string;
  const out = join(ROOT, 'test', 'artifacts', `src-only-${process.pid}`);
  /** The project's files the compile took in, relative to the project. */
  let compiled: string[];
  beforeAll(async () => {
    database = await createTestDatabase();
    directory = await mkdtemp(join(scratch, 'env-'));
    // What `nest build` (ensureBuilt's first step) and `nest start` compile from tsconfig.build.json, as its
    // tsBuildInfoFile lists it (relative to dist/); the emitted files are copied into the project (to find
    // node_modules) and away from dist/ (to disturb no other test's service).
    const { fileNames } = JSON.parse(await readFile(join(ROOT, 'dist', '.tsbuildinfo-src'), 'utf8')) as {
      fileNames: string[];
    };
    compiled = fileNames.map((name) => relative(ROOT, resolve(ROOT, 'dist', name)));
    for (const source of compiled.filter((name) => /^(src|migrations)\/.*\.ts$/.test(name))) {
      const emitted = source.replace(/\.ts$/, '.js');
      await mkdir(dirname(join(out, emitted)), { recursive: true });
      await cp(join(ROOT, 'dist', emitted), join(out, emitted));
    }
  }, 300_000);
  afterAll(async () => {
    await database.drop();
    await rm(out, { recursive: true, force: true });
  });

  it('reads .env (the real environment winning), applies every migration to a fresh database, is ready, and serves animals', async () => {
    await writeFile(
      join(directory, '.env'),
      `PORT=99999\nDATABASE_URL=${database.url}\nAPI_KEYS=${KEY}\nLOG_LEVEL=warn\n`,
    );
    // startService exports PORT (a free port): it wins over the 99999 of .env; the rest comes from .env.
    const service = await startService({}, { main: join(out, 'src', 'main.js'), cwd: directory });
    try {
      const ready = await fetch(`${service.origin}/health/ready`);
      expect(ready.status).toBe(200);
      const body = (await ready.json()) as { details: { migrations: unknown } };
      expect(body.details.migrations).toMatchObject({ status: 'up', applied: MIGRATIONS.length });
      const created = await fetch(`${service.origin}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
      });
      expect(created.status).toBe(201);
    } finally {
      service.kill('SIGTERM');
      await service.exited;
    }
  }, 120_000);

  it('.env is read by the apikey and migration commands; they and the service refuse a bad value in it in one line', async () => {
    await writeFile(join(directory, '.env'), `DATABASE_URL=${database.url}\n`);
    expect(await node('cli/migrations.js', ['run'], {}, { cwd: directory })).toMatchObject({ code: 0 });
    const created = await node('cli/apikey.js', ['create', 'from .env'], {}, { cwd: directory });
    expect(created).toMatchObject({ code: 0, stdout: expect.stringMatching(/^pet_\w{32}\n$/) });

    await writeFile(join(directory, '.env'), 'DATABASE_URL=mysql://u:hunter2@h/db\n');
    for (const [script, args] of COMMANDS) {
      const refused = await node(script, [...args], {}, { cwd: directory });
      expect(expectOneLineFailure(refused, 'Invalid configuration')).toBe(
        'Invalid configuration: DATABASE_URL must start with postgres:// or postgresql://',
      );
    }
  }, 120_000);

  it('holds none of the development tools, and without DATABASE_URL the service and the commands say in one line what to set or run', async () => {
    expect(compiled).toEqual(expect.arrayContaining(['src/main.ts', 'src/cli/apikey.ts', 'migrations/index.ts']));
    expect(compiled.filter((name) => name.startsWith('dev/'))).toEqual([]);
    expect(existsSync(join(out, 'dev'))).toBe(false);
    const env = withPath({ HOST: '127.0.0.1', PORT: '0', API_KEYS: KEY, DATA_DIR: join(scratch, 'without-dev') });
    for (const [script, args] of COMMANDS) {
      const refused = await run(process.execPath, [join(out, 'src', script), ...args], env, 60_000);
      expect(expectOneLineFailure(refused, 'Invalid configuration')).toBe(
        'Invalid configuration: DATABASE_URL is not set: set it to your PostgreSQL, or run `npm start` (or `npm run apikey`, `npm run migration:*`), which starts an embedded one for development',
      );
    }
    expect(existsSync(join(scratch, 'without-dev'))).toBe(false);
  }, 200_000);
});

describe('production mode (NODE_ENV=production, as in the image)', () => {
  const production = (env: Env = {}) => ({ NODE_ENV: 'production', DATABASE_URL: commandsDatabase.url, ...env });

  it('runs the migration and key commands with DATABASE_URL alone', async () => {
    const migrated = await node('cli/migrations.js', ['run'], production());
    expect(migrated).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Applied CreatePets\d+, /) });
    expect(await lastApplied()).toBe(last.name);
    const created = await node('cli/apikey.js', ['create', 'production'], production());
    expect(created).toMatchObject({ code: 0, stdout: expect.stringMatching(/^pet_\w{32}\n$/) });
  }, 60_000);

  // Which example values the service refuses in production: src/config/published-secrets.spec.ts.
  it('refuses to start the service without CURSOR_SECRET, and the commands with an example secret this repository publishes, naming the variable', async () => {
    expect(expectOneLineFailure(await refusedService(production()), 'Invalid configuration')).toBe(
      'Invalid configuration: CURSOR_SECRET is required when NODE_ENV=production (the same value on every instance)',
    );
    for (const script of ['cli/migrations.js', 'cli/apikey.js']) {
      const command = await node(
        script,
        script.endsWith('migrations.js') ? ['show'] : ['list'],
        production({ CURSOR_SECRET: 'example-cursor-secret-change-me-please' }),
      );
      expect(expectOneLineFailure(command, 'Invalid configuration')).toMatch(
        /^Invalid configuration: CURSOR_SECRET is an example value published with this service, refused when NODE_ENV=production: set a random value/,
      );
    }
  }, 60_000);
});

describe('the commands against a DATABASE_URL nobody answers', () => {
  it('say in one line what they tried and what to set, without the password', async () => {
    const url = `postgres://app:hunter2@127.0.0.1:${await freePort()}/animal_store`;
    for (const [script, args, start] of [
      ['cli/apikey.js', ['list'], 'apikey failed: '],
      ['cli/migrations.js', ['run'], 'migration failed: '],
    ] as const) {
      const message = expectOneLineFailure(await node(script, [...args], { DATABASE_URL: url }), start);
      expect(message).toMatch(
        /ECONNREFUSED .*DATABASE_URL points at 127\.0\.0\.1:\d+\/animal_store\): start that PostgreSQL/,
      );
      expect(message).not.toContain('hunter2');
    }
  }, 60_000);
});

/** On the database the production commands migrated above. */
describe('npm run migration:revert', () => {
  const env = () => ({ DATABASE_URL: commandsDatabase.url });

  it('warns what it drops and reverts nothing without an answer (no stdin, as in CI)', async () => {
    const refused = await node('cli/migrations.js', ['revert'], env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`reverts ${last.name}`);
    expect(refused.stderr).toContain(`it drops ${last.revertDrops}`);
    expect(refused.stderr).toContain('--yes');
    expect(refused.stderr).toMatch(/Nothing reverted\.\n$/);
    expect(await lastApplied()).toBe(last.name);

    const declined = await node('cli/migrations.js', ['revert'], env(), { input: 'no\n' });
    expect(declined.code).toBe(1);
    expect(await lastApplied()).toBe(last.name);
  }, 60_000);

  it('reverts after "yes", or with --yes, and shows the time it ran, not the migration timestamp', async () => {
    const before = Date.now() - 1_000;
    const confirmed = await node('cli/migrations.js', ['revert'], env(), { input: 'yes\n' });
    expect(confirmed.code).toBe(0);
    const [, at] =
      new RegExp(`^Reverted ${last.name} on 127\\.0\\.0\\.1:\\d+/test_\\w+ at (\\S+)\\.\n$`).exec(confirmed.stdout) ??
      [];
    expect(Date.parse(at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(at)).toBeLessThanOrEqual(Date.now());
    // TypeORM's CLI said "It was executed on <the date in the migration's name>".
    const output = `${confirmed.stdout}${confirmed.stderr}`;
    expect(output).not.toMatch(/executed on/i);
    const timestamp = Number(/\d{13}$/.exec(last.name)![0]);
    expect(output).not.toContain(new Date(timestamp).toString());
    expect(output).not.toContain(new Date(timestamp).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    expect(await lastApplied()).toBe(previous.name);

    const scripted = await node('cli/migrations.js', ['revert', '--yes'], env());
    expect(scripted).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(new RegExp(`^Reverted ${previous.name} `)),
    });
    expect(await lastApplied()).toBe(new MIGRATIONS[MIGRATIONS.length - 3]().name);
  }, 60_000);

  it('shows every migration of this build, applied [X] or pending [ ], in order', async () => {
    const pending = [previous.name, last.name];
    const lines = MIGRATIONS.map((migration) => new migration().name).map(
      (name) => `${pending.includes(name) ? '[ ]' : '[X]'} ${name}\n`,
    );
    expect(await node('cli/migrations.js', ['show'], env())).toMatchObject({ code: 0, stdout: lines.join('') });
  }, 60_000);
});
