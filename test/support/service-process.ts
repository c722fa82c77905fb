import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './built-service.js';
import { freePort } from './database-server.js';
import { pollUntil } from './poll.js';

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  origin: string;
  pid: number;
  /** Every line the service wrote to stdout so far. */
  lines: string[];
  stderr: string[];
  exited: Promise<ServiceExit>;
  kill(signal: NodeJS.Signals): void;
}

/** What `npm start` runs: the service on the embedded PostgreSQL under DATA_DIR unless DATABASE_URL is set. */
export const DEVELOPMENT_ENTRY = join(ROOT, 'dist', 'dev', 'start.js');

interface ServiceLocation {
  /** The compiled entry point: default dist/src/main.js of the project; DEVELOPMENT_ENTRY as `npm start` runs it. */
  main?: string;
  /** Working directory, where `.env` and a relative DATA_DIR are found (default: the project root). */
  cwd?: string;
  /** The port to listen on (a restart behind a load balancer keeps its address); default: a free one. */
  port?: number;
}

/** The node options `npm run start:prod` puts before the tracing preload and the entry: the V8 flags. */
const PRODUCTION_FLAGS = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts['start:prod']
  .split(' --import ')[0]
  .split(' ')
  .slice(1);

/**
 * `node <V8 flags> --import …/tracing/preload.js dist/src/main.js` (as `npm run start:prod` and the image run it, or
 * `npm start`'s DEVELOPMENT_ENTRY) as a child process with exactly `env` (plus PATH), ready when this resolves.
 */
export async function startService(env: Record<string, string>, where: ServiceLocation = {}): Promise<ServiceProcess> {
  const port = where.port ?? (await freePort());
  const main = where.main ?? join(ROOT, 'dist', 'src', 'main.js');
  const dist = main === DEVELOPMENT_ENTRY ? join(ROOT, 'dist', 'src') : dirname(main);
  const preload = join(dist, 'observability', 'tracing', 'preload.js');
  const child = spawn(process.execPath, [...PRODUCTION_FLAGS, '--import', pathToFileURL(preload).href, main], {
    cwd: where.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  const collect = (into: string[]) => {
    let partial = '';
    return (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop()!;
      into.push(...parts.filter((line) => line !== ''));
    };
  };
  child.stdout.on('data', collect(lines));
  child.stderr.on('data', collect(stderr));
  const exited = new Promise<ServiceExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const origin = `http://127.0.0.1:${port}`;
  let exit: ServiceExit | undefined;
  void exited.then((value) => (exit = value));
  await pollUntil(
    async () => {
      if (exit) throw new Error(`service exited (${JSON.stringify(exit)}): ${stderr.join('\n')}`);
      return (await fetch(`${origin}/health/ready`)).status === 200;
    },
    // A first start on the embedded PostgreSQL runs initdb, which a loaded machine can take most of a minute for.
    { timeoutMs: main === DEVELOPMENT_ENTRY ? 90_000 : 30_000, what: 'the service to be ready' },
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return { origin, pid: child.pid!, lines, stderr, exited, kill: (signal) => child.kill(signal) };
}
