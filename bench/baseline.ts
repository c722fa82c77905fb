/**
 * `--baseline <dir>`: another built checkout of the service (main before a change, say, in a git worktree of its
 * own) runs as one more server, started as the service is (bench.ts, `startBenchService`) from its own directory,
 * with a database key issued by its own CLI, and takes its turn on every route in every round. The run then prints
 * the service over it: a change measured before and after in one run.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

export interface Baseline {
  /** The checkout's root, absolute. */
  dir: string;
  /** Its commit as `git describe --always --dirty` names it, for the report. */
  revision: string;
}

/** What a checkout must hold to be run: the service and the CLI that issues its key. */
const BUILT = [join('dist', 'src', 'main.js'), join('dist', 'src', 'cli', 'apikey.js')];

/** The checkout named by `--baseline <dir>` in `argv`, once it is known to be built; undefined without the option. */
export async function baselineOption(argv: readonly string[]): Promise<Baseline | undefined> {
  const at = argv.indexOf('--baseline');
  if (at === -1) return undefined;
  const value = argv[at + 1];
  if (value === undefined || value.startsWith('--')) {
    throw new Error('--baseline needs the directory of a built checkout of the service');
  }
  const dir = resolve(value);
  const missing = BUILT.map((file) => join(dir, file)).filter((file) => !existsSync(file));
  if (missing.length > 0) {
    throw new Error(`--baseline ${value}: ${missing.join(', ')} missing; run \`npm ci && npm run build\` there first`);
  }
  return { dir, revision: await revision(dir) };
}

async function revision(dir: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('git', ['-C', dir, 'describe', '--always', '--dirty']);
    return stdout.trim();
  } catch {
    return 'not a git checkout';
  }
}
