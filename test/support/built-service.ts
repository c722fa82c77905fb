import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollUntil } from './poll.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MARKER = join(ROOT, 'dist', '.built-by-tests');
const LOCK = join(ROOT, 'test', 'artifacts', 'build.lock');
const BUILD_TIMEOUT_MS = 180_000;

/** What `npm run build` reads: dist/ is stale once one of them is newer. */
export const BUILD_SOURCES = [
  'src',
  'dev',
  'migrations',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
];

function newestSourceChange(): number {
  let newest = 0;
  const visit = (path: string) => {
    const stats = statSync(path);
    if (stats.isDirectory()) readdirSync(path).forEach((entry) => visit(join(path, entry)));
    else newest = Math.max(newest, stats.mtimeMs);
  };
  BUILD_SOURCES.forEach((entry) => visit(join(ROOT, entry)));
  return newest;
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end (bounded), capturing both streams, in `cwd` (default: the project root); `input` is
 * written to its stdin, which is then closed (empty without it, as in CI).
 */
export function run(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 60_000,
  options: { cwd?: string; input?: string } = {},
) {
  return new Promise<Finished>((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(options.input ?? '');
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(kill, timeoutMs);
    // A test that fails or times out first leaves no process behind: the worker's exit ends it too.
    process.once('exit', kill);
    child.once('error', reject);
    child.once('close', (code) => {
      process.removeListener('exit', kill);
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/**
 * `npm run build` once for all test files that need dist/, skipped when dist/ is newer than every source. A directory
 * lock keeps parallel Jest workers from building over each other.
 */
export async function ensureBuilt(): Promise<void> {
  await mkdir(dirname(LOCK), { recursive: true });
  const taken = async () => {
    const lock = await stat(LOCK).catch(() => null);
    if (lock && Date.now() - lock.mtimeMs > BUILD_TIMEOUT_MS) await rm(LOCK, { recursive: true, force: true });
    return mkdir(LOCK).then(() => true);
  };
  await pollUntil(taken, { timeoutMs: BUILD_TIMEOUT_MS, intervalMs: 250, what: `the build lock ${LOCK}` });
  try {
    const built = await stat(MARKER).catch(() => null);
    if (built && built.mtimeMs >= newestSourceChange()) return;
    const build = await run('npm', ['run', 'build'], process.env, BUILD_TIMEOUT_MS);
    if (build.code !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
    await writeFile(MARKER, new Date().toISOString());
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

/** `node dist/<script> <args>` of a copy of the build (`root`), run from it with only PATH and `env` set. */
export function runBuilt(root: string, script: string, args: string[], env: Record<string, string>, timeoutMs: number) {
  const only = { PATH: process.env.PATH ?? '', ...env };
  return run(process.execPath, [join(root, 'dist', script), ...args], only, timeoutMs, { cwd: root });
}

/** `npm run apikey -- <args>` against the given database, as an operator types it. */
export function apikey(DATABASE_URL: string, ...args: string[]): Promise<Finished> {
  return run('npm', ['run', '--silent', 'apikey', '--', ...args], { ...process.env, DATABASE_URL });
}

/**
 * What `npm run apikey` runs (`node dist/dev/apikey.js <args>`), without npm's own start-up: for specs that run the
 * command dozens of times. test/key-lifecycle.e2e-spec.ts runs it through npm once.
 */
export function apikeyScript(DATABASE_URL: string, ...args: string[]): Promise<Finished> {
  return run(process.execPath, [join(ROOT, 'dist', 'dev', 'apikey.js'), ...args], { ...process.env, DATABASE_URL });
}

/** The column headers `npm run apikey -- list` prints, in order. */
export const KEY_LIST_COLUMNS = [
  'ID',
  'NAME',
  'PREFIX',
  'SCOPES',
  'CREATED',
  'LAST USED',
  'EXPIRES',
  'REVOKED',
  'STATE',
  'REPLACED BY',
];

/** A migration of a copy of the build: its name, the SQL its up() runs, `transaction: false` to run outside one. */
export interface ExtraMigration {
  name: string;
  sql: string;
  transaction?: false;
}

/**
 * A copy of the build (dist/, migrations/, package.json, node_modules linked) in a temporary directory, with `extra`
 * appended to its compiled migrations under the names in `migrations`: the migration commands and the service run
 * from it as from the checkout, which they never write into.
 */
export async function buildCopyWith(
  extra: readonly ExtraMigration[],
): Promise<{ root: string; migrations: string[]; remove(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'animal-store-build-'));
  const classes = extra.map((migration, i) => ({
    ...migration,
    className: `${migration.name}${1795500000000 + i}`,
    file: `${1795500000000 + i}-${migration.name}.js`,
  }));
  try {
    // As root, an embedded PostgreSQL started from the copy runs as the `postgres` user, which must enter it.
    await chmod(root, 0o755);
    await cp(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true });
    await cp(join(ROOT, 'migrations'), join(root, 'migrations'), { recursive: true });
    for (const file of ['package.json', '.prettierrc']) await cp(join(ROOT, file), join(root, file));
    await symlink(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
    const migrations = join(root, 'dist', 'migrations');
    for (const { className, file, sql, transaction } of classes) {
      await writeFile(
        join(migrations, file),
        `export class ${className} {\n  name = '${className}';\n  revertDrops = 'no data';\n` +
          (transaction === false ? '  transaction = false;\n' : '') +
          `  async up(queryRunner) { await queryRunner.query(${JSON.stringify(sql)}); }\n  async down() {}\n}\n`,
      );
    }
    const index = await readFile(join(migrations, 'index.js'), 'utf8');
    const LIST = /export const MIGRATIONS = \[([^\]]*)\];/;
    if (!LIST.test(index))
      throw new Error('dist/migrations/index.js has no `export const MIGRATIONS = [...]` to extend');
    const imports = classes.map(({ className, file }) => `import { ${className} } from './${file}';\n`).join('');
    await writeFile(
      join(migrations, 'index.js'),
      imports +
        index.replace(
          LIST,
          (_, listed: string) =>
            `export const MIGRATIONS = [${[listed.replace(/,\s*$/, ''), ...classes.map((c) => c.className)].join(', ')}];`,
        ),
    );
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return {
    root,
    migrations: classes.map(({ className }) => className),
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
