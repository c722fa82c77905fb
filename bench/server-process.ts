import { ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import freePort from 'get-port';

/** The repository root (this module runs from bench/dist/). */
export const root = fileURLToPath(new URL('../../', import.meta.url));

export interface NodeRuntime {
  /** The node binary. */
  path: string;
  /** What it answers to `--version`. */
  version: string;
}

/**
 * Node 24, the image's runtime: this process's own Node when it is 24, else the one `.ci/node 24` finds or installs
 * outside the project, as CI does (NODE_TOOLS_DIR names a directory where it is already installed).
 */
export async function node24(): Promise<NodeRuntime> {
  if (process.versions.node.split('.')[0] === '24') return { path: process.execPath, version: process.version };
  const run = promisify(execFile);
  const { stdout: bin } = await run(join(root, '.ci', 'node'), ['24']);
  const path = join(bin.trim(), 'node');
  const { stdout: version } = await run(path, ['--version']);
  return { path, version: version.trim() };
}

/** A module of the built service, imported at run time: every bench script runs after `npm run build`. */
export const built = (path: string) => new URL(`../../dist/src/${path}`, import.meta.url).href;

/** A TCP port nothing listens on now, found as the tests and dev/ find theirs. */
export { freePort };

export interface ScratchCluster {
  /** The superuser URL of the cluster's database. */
  url: string;
  /** The temporary directory the cluster lives in, which the `postgres` user can enter; deleted by `close()`. */
  directory: string;
  /** Shuts PostgreSQL down, keeping its files for `start()`. */
  pause(): Promise<void>;
  /** Starts it again after `pause()`, on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A throw-away embedded PostgreSQL, the service's own (dev/scratch-database.ts), as built; loaded when used. */
export async function startScratchCluster(options?: { postgresFlags?: readonly string[] }): Promise<ScratchCluster> {
  const dev = (await import(built('../dev/scratch-database.js'))) as {
    startScratchCluster: (options?: { postgresFlags?: readonly string[] }) => Promise<ScratchCluster>;
  };
  return dev.startScratchCluster(options);
}

const CLOCK_TICKS_PER_SECOND = 100; // `getconf CLK_TCK` on Linux x86-64 and arm64

/**
 * User + system CPU time so far, in microseconds, of a process and every process under it (for a postmaster, the
 * whole cluster), from /proc. Its four times plus its live children's, counted alike, are everything: the kernel adds
 * a child's times, with those of the children it reaped, to its parent's cutime and cstime when the parent reaps it.
 */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name start at field 3 (state); utime to cstime are fields 14 to 17.
  const ticks = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .slice(11, 15);
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
  const ofChild = (child: string) => {
    try {
      return cpuMicros(Number(child));
    } catch {
      return 0; // exited since it was listed: its parent's cutime and cstime hold it from the next sample on
    }
  };
  return (
    (ticks.reduce((sum, tick) => sum + Number(tick), 0) * 1e6) / CLOCK_TICKS_PER_SECOND +
    children.reduce((sum, child) => sum + ofChild(child), 0)
  );
}

/** Pins a process's threads to `cpuList` (as taskset reads it: "1", "0-2"); what it starts from then on inherits it. */
export function pinTo(pid: number, cpuList: string): void {
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpuList, String(pid)], { stdio: 'ignore' });
}

/** The PID of the PostgreSQL running from `clusterDir`, from the first line of its postmaster.pid. */
export const postmasterPid = (clusterDir: string) =>
  Number(readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);

/** Peak resident set size of a process so far, in MiB (VmHWM). */
export function peakRssMiB(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Polls `url` until it answers 200, within `timeoutMs`. */
export async function waitForOk(url: string, headers: Record<string, string>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = String((error as Error).cause ?? error);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (${last})`);
}

export interface ServerProcess {
  pid: number;
  /** Milliseconds from spawn to the first 200 on the readiness URL. */
  startupMs: number;
  logFile: string;
  /** With `ipc`, talk to it through `child.send` and its `'message'` events. */
  child: ChildProcess;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Where its output goes; unset, a temporary file removed on stop. */
  logFile?: string;
  readyUrl: string;
  headers: Record<string, string>;
  timeoutMs?: number;
  /** Opens an IPC channel (`process.send` in the server, `child.send` here). */
  ipc?: boolean;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

const LOG_TAIL_CHARS = 2_000;

/**
 * Starts a server as its own process group (so `npm start` and what it spawns
 * stop together), its output in `logFile`, and waits for its first 200. If it
 * does not get there, the error carries the end of its output.
 */
export async function startServer(options: SpawnOptions): Promise<ServerProcess> {
  const logDir = options.logFile ? null : await mkdtemp(join(tmpdir(), 'animal-store-server-'));
  const logFile = options.logFile ?? join(logDir!, 'server.log');
  const log = openSync(logFile, 'a');
  const started = performance.now();
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: options.ipc ? ['ignore', log, log, 'ipc'] : ['ignore', log, log],
    detached: true,
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid!, 'SIGTERM');
      const killed = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
      await exited(child);
      clearTimeout(killed);
    }
    if (logDir) await rm(logDir, { recursive: true, force: true });
  };
  let ready = false;
  const earlyExit = exited(child).then(() => {
    if (!ready)
      throw new Error(`${options.command} ${options.args.join(' ')} exited early${logDir ? '' : `; see ${logFile}`}`);
  });
  try {
    await Promise.race([waitForOk(options.readyUrl, options.headers, options.timeoutMs ?? 60_000), earlyExit]);
    ready = true;
  } catch (error) {
    ready = true; // the exit that follows is ours
    const tail = readFileSync(logFile, 'utf8').slice(-LOG_TAIL_CHARS);
    await stop();
    throw new Error(`${(error as Error).message}\n${tail}`, { cause: error });
  }
  return { pid: child.pid!, startupMs: performance.now() - started, logFile, child, stop };
}

/**
 * The settings every measurement runs the built service with: production, one
 * API key, a cursor secret (production requires one) and per-key rate limiting
 * off, so that the load is measured rather than refused.
 */
export function serviceEnv(port: number, apiKey: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: String(port),
    API_KEYS: apiKey,
    CURSOR_SECRET: randomBytes(32).toString('base64url'),
    RATE_LIMIT_PER_MINUTE: '0',
  };
}

export interface ServiceOptions extends Pick<SpawnOptions, 'logFile' | 'ipc'> {
  databaseUrl: string;
  apiKey: string;
  /** Added to (or replacing) `serviceEnv`. */
  env?: Record<string, string>;
  /** Node options before dist/src/main.js, e.g. `--import` of a preloaded module. */
  nodeArgs?: string[];
  /** The node binary; this process's by default. */
  node?: string;
  /** The root of the built checkout to run (its dist/src/main.js, from its own directory); this one by default. */
  checkout?: string;
}

export type RunningService = ServerProcess & { origin: string };

/** The node arguments of `npm run start:prod` in `checkout`: V8 flags, tracing preload, dist/src/main.js. */
export function startProdArguments(checkout = root): string[] {
  const { scripts } = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as {
    scripts: Record<string, string | undefined>;
  };
  // An older checkout may have no start:prod: it ran `node dist/src/main.js`.
  return (scripts['start:prod'] ?? 'node dist/src/main.js').split(' ').slice(1);
}

/**
 * Runs the build as production does, with the node arguments of its own `npm run start:prod` (its V8 flags, the
 * tracing preload, dist/src/main.js), on a free port against `databaseUrl`; resolves once it lists animals.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const checkout = options.checkout ?? root;
  const main = join(checkout, 'dist', 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` in ${checkout} first`);
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const server = await startServer({
    command: options.node ?? process.execPath,
    args: [...(options.nodeArgs ?? []), ...startProdArguments(checkout)],
    cwd: checkout,
    env: { ...serviceEnv(port, options.apiKey), DATABASE_URL: options.databaseUrl, ...options.env },
    logFile: options.logFile,
    readyUrl: `${origin}/v1/pets?limit=1`,
    headers: { authorization: `Bearer ${options.apiKey}` },
    ipc: options.ipc,
  });
  return { ...server, origin };
}
