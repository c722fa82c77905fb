/** The service as `npm run bench` runs it, shared with bench/profile.ts so that a profile sees the same service. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  freePort,
  NodeRuntime,
  root,
  RunningService,
  startProdArguments,
  startServer,
  startService,
} from './server-process.js';

/**
 * A key issued into the database by the service's own CLI (`npm run apikey -- create`), so that the service
 * authenticates through its database-backed key store, as it does in production. `checkout`: whose CLI.
 */
export async function issueDatabaseKey(node: NodeRuntime, databaseUrl: string, checkout = root): Promise<string> {
  const cli = join(checkout, 'dist', 'src', 'cli', 'apikey.js');
  const { stdout } = await promisify(execFile)(node.path, [cli, 'create', 'bench'], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return stdout.trim();
}

/**
 * The rate limit of the service and the feature-equal app: counted and announced in headers on every request,
 * never reached in a run.
 */
export const RATE_LIMIT_PER_MINUTE = '1000000';

export interface BenchServiceOptions {
  /** Whose build: this checkout's by default (the baseline's, with `--baseline`). */
  checkout?: string;
  /** Names its log file in the run's log directory. */
  label?: string;
  /** Only to profile it (bench/profile.ts), never in a measured run. */
  nodeArgs?: string[];
  /** Only to profile it, as `nodeArgs`. */
  env?: Record<string, string>;
}

/** Production settings with the database key only (no API_KEYS) and the per-key rate limit at RATE_LIMIT_PER_MINUTE. */
export const startBenchService = (
  node: NodeRuntime,
  databaseUrl: string,
  key: string,
  logDir: string,
  { checkout = root, label = 'service', nodeArgs = [], env = {} }: BenchServiceOptions = {},
) =>
  startService({
    node: node.path,
    nodeArgs,
    checkout,
    databaseUrl,
    apiKey: key,
    env: { API_KEYS: '', RATE_LIMIT_PER_MINUTE, ...env },
    logFile: join(logDir, `${label}.log`),
  });

/** The yardsticks and the script each runs. */
const YARDSTICKS = {
  'feature-equal': 'feature-equal-app',
  straightforward: 'straightforward-app',
  ceiling: 'ceiling',
  floor: 'nest-floor',
} as const;
export type YardstickName = keyof typeof YARDSTICKS;

/** A yardstick server, given the key in its in-memory set. `nodeArgs`: only to profile it, as for the service. */
export async function startYardstick(
  node: NodeRuntime,
  name: YardstickName,
  databaseUrl: string,
  key: string,
  logDir: string,
  { nodeArgs = [] }: Pick<BenchServiceOptions, 'nodeArgs'> = {},
): Promise<RunningService> {
  const script = YARDSTICKS[name];
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const server = await startServer({
    command: node.path,
    // The service's V8 flags for the floor, which is measured at its cheapest.
    args: [
      ...nodeArgs,
      ...(name === 'floor' ? startProdArguments().filter((arg) => /^--(?!import$)/.test(arg)) : []),
      fileURLToPath(new URL(`./${script}.js`, import.meta.url)),
    ],
    cwd: root,
    env: {
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      API_KEYS: key,
      RATE_LIMIT_PER_MINUTE,
    },
    logFile: join(logDir, `${script}.log`),
    readyUrl: `${origin}/v1/pets?limit=1`,
    headers: { authorization: `Bearer ${key}` },
  });
  return { ...server, origin };
}
