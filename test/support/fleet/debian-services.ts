import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, THROWAWAY_CLUSTER_FLAGS } from '../database-server.js';
import { pollUntil } from '../poll.js';

/**
 * The fleet's infrastructure from Debian's packages (`.ci/run` installs them), each in the foreground on 127.0.0.1 in
 * a temporary directory, stopped by its PID. PostgreSQL and the programs around it refuse to run as root: as root they
 * run as the package's `postgres` user through setpriv, which execs (the PID is the server's own).
 */

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** A program of Debian 12's PostgreSQL, which every server here runs. */
export function pgProgram(name: string): string {
  if (!existsSync(join(PG_BIN, name))) throw new Error(`No ${name} under ${PG_BIN}: apt-get install -y postgresql-15`);
  return join(PG_BIN, name);
}

const asRoot = process.getuid?.() === 0;

function spawnLogged(command: string, args: string[], unprivileged: boolean) {
  const [file, argv] =
    unprivileged && asRoot
      ? ['setpriv', ['--reuid', 'postgres', '--regid', 'postgres', '--init-groups', '--', command, ...args]]
      : [command, args];
  const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => (output += chunk.toString());
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  child.once('error', (error) => (output += `could not start ${command}: ${error.message}\n`));
  return { child, output: () => output };
}

/** Runs a command to its end (killed after `timeoutMs`): its exit code and output. */
export function runOnce(command: string, args: string[], { unprivileged = false, timeoutMs = 120_000 } = {}) {
  const { child, output } = spawnLogged(command, args, unprivileged);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output() });
    }),
  );
}

type DaemonOptions = { unprivileged: boolean; stopSignal: NodeJS.Signals; dir: string };

/** A server: its output so far, `exited`, and `stop`: `stopSignal` (or the one given), then SIGKILL, `dir` removed. */
export function daemon(
  command: string,
  args: string[],
  { unprivileged = false, stopSignal = 'SIGTERM', dir = '' }: Partial<DaemonOptions> = {},
) {
  const { child, output } = spawnLogged(command, args, unprivileged);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid ?? -1,
    output,
    exited,
    /** pollUntil, whose timeout says what the server wrote. */
    until: (probe: () => unknown, options: { timeoutMs: number; intervalMs?: number; what: string }) =>
      pollUntil(probe, options).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${output()}`))),
    stop: async (signal = stopSignal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
export type Daemon = ReturnType<typeof daemon>;

/** A directory the unprivileged servers can write. */
export async function workDirectory(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `animal-store-fleet-${name}-`));
  if (asRoot) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres']).toString()));
    await chown(dir, uid, gid);
  }
  await chmod(dir, 0o755);
  return dir;
}

/** A GET's status (with `bearer`, if given), or null when nothing answered within `timeoutMs`. */
export const statusOf = (url: string, timeoutMs = 2_000, bearer?: string) =>
  fetch(url, {
    headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
    signal: AbortSignal.timeout(timeoutMs),
  }).then(
    async (response) => (await response.arrayBuffer(), response.status),
    () => null,
  );

/** A server's address for `database` as `user` (trust authentication: throw-away servers on 127.0.0.1). */
export function pgUrl(port: number) {
  return (database = 'postgres', user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${database}`;
}

/** PostgreSQL's `-c name=value` for each setting. */
export const settingFlags = (settings: Record<string, string | number>) =>
  Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);

/** One query on a connection of its own: a failover closes connections to the old primary. */
export async function queryOnce<Row extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Whether a connection to `url` finds a server out of recovery (a primary). */
export const isPrimary = async (url: string) =>
  (await queryOnce<{ r: boolean }>(url, 'SELECT pg_is_in_recovery() AS r'))[0].r === false;

export async function startPostgres() {
  const dir = await workDirectory('pg');
  const data = join(dir, 'data');
  const initdb = ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'];
  const init = await runOnce(pgProgram('initdb'), initdb, { unprivileged: true });
  if (init.code !== 0) throw new Error(`initdb failed: ${init.output}`);
  const port = await freePort();
  const settings = settingFlags({ listen_addresses: '127.0.0.1', max_connections: 200 });
  const args = ['-D', data, '-p', String(port), '-k', dir, ...THROWAWAY_CLUSTER_FLAGS, ...settings];
  // SIGINT: a fast shutdown.
  const server = daemon(pgProgram('postgres'), args, { unprivileged: true, stopSignal: 'SIGINT', dir });
  const url = pgUrl(port);
  await server.until(() => isPrimary(url()), { timeoutMs: 30_000, what: 'PostgreSQL to accept connections' });
  return { ...server, port, url };
}
export type PostgresCluster = Awaited<ReturnType<typeof startPostgres>>;

/**
 * PgBouncer in transaction mode for every database of `postgres`, with no `ignore_startup_parameters`: a
 * client that sends a startup parameter it does not know is refused, as in the default configuration.
 */
export async function startPgBouncer(postgres: PostgresCluster, users: string[], poolSize: number) {
  const dir = await workDirectory('pgbouncer');
  const port = await freePort();
  await writeFile(join(dir, 'userlist.txt'), users.map((user) => `"${user}" ""`).join('\n') + '\n', { mode: 0o644 });
  const config = [
    '[databases]',
    `* = host=127.0.0.1 port=${postgres.port}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    'max_client_conn = 1000',
    `default_pool_size = ${poolSize}`,
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ];
  await writeFile(join(dir, 'pgbouncer.ini'), config.join('\n'), { mode: 0o644 });
  const bouncer = daemon('pgbouncer', [join(dir, 'pgbouncer.ini')], { unprivileged: true, stopSignal: 'SIGINT', dir });
  const url = pgUrl(port);
  await bouncer.until(() => isPrimary(url()), { timeoutMs: 20_000, what: 'PgBouncer to accept connections' });
  return { ...bouncer, port, url };
}
export type PgBouncer = Awaited<ReturnType<typeof startPgBouncer>>;

/**
 * HAProxy on `sections` (which go on from `defaults`) and a stats page, stopped with `stopSignal`. `states()`: each
 * proxy's view of each server, 'UP', 'DOWN', or a transition such as 'UP 1/2'.
 */
export async function startHaproxyOn(name: string, sections: string[], stopSignal: NodeJS.Signals) {
  const dir = await workDirectory(name);
  const stats = await freePort();
  const file = join(dir, 'haproxy.cfg');
  const config = [
    'global',
    '  maxconn 2000',
    'defaults',
    '  timeout connect 1s',
    // Without it a check may take only `inter`: on a busy machine a healthy server would be marked down.
    '  timeout check 2s',
    ...sections,
    'frontend stats',
    '  mode http',
    `  bind 127.0.0.1:${stats}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ];
  await writeFile(file, config.join('\n'));
  const check = await runOnce('haproxy', ['-c', '-f', file]);
  if (check.code !== 0) throw new Error(`haproxy.cfg is invalid: ${check.output}`);
  const haproxy = daemon('haproxy', ['-db', '-f', file], { stopSignal, dir });
  const states = async () => {
    const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
    const [header, ...rows] = csv
      .trim()
      .split('\n')
      .map((line) => line.split(','));
    const [px, sv, status] = ['# pxname', 'svname', 'status'].map((column) => header.indexOf(column));
    const result: Record<string, Record<string, string>> = {};
    for (const row of rows.filter((row) => !['FRONTEND', 'BACKEND'].includes(row[sv])))
      (result[row[px]] ??= {})[row[sv]] = row[status];
    return result;
  };
  await haproxy.until(() => states().then(() => true), { timeoutMs: 10_000, what: 'HAProxy to start' });
  return { ...haproxy, states };
}

/** Health-check interval (ms) and how many failed or passed checks mark a server down or up. */
export type BalancerSettings = Record<'interMs' | 'fall' | 'rise', number>;

/**
 * HAProxy in front of `servers` (name -> port), health-checking `/health/ready`, soft-stopped (it finishes what it
 * holds). Its `retrying` origin re-sends GETs and creates carrying an Idempotency-Key on a failed connection or an
 * empty answer; `strict` never retries.
 */
export async function startHaproxy(servers: Record<string, number>, settings: BalancerSettings) {
  const [retrying, strict] = [await freePort(), await freePort()];
  const listen = (name: string, port: number, retries: string[]) => [
    `listen ${name}`,
    `  bind 127.0.0.1:${port}`,
    '  option httpchk GET /health/ready',
    '  http-check expect status 200',
    // Keep-Alive is hop-by-hop: passed on, the instance's `timeout=72` would let clients keep a connection idle past
    // HAProxy's http-keep-alive, and a request sent as HAProxy closes it is lost.
    '  http-response del-header keep-alive',
    ...retries,
    `  default-server inter ${settings.interMs} fall ${settings.fall} rise ${settings.rise}`,
    ...Object.entries(servers).map(([server, port]) => `  server ${server} 127.0.0.1:${port} check`),
  ];
  const haproxy = await startHaproxyOn(
    'haproxy',
    [
      '  mode http',
      '  option forwardfor',
      '  timeout client 30s',
      '  timeout server 30s',
      '  timeout http-keep-alive 10s',
      ...listen('retrying', retrying, [
        '  retries 2',
        '  retry-on conn-failure empty-response response-timeout',
        '  option redispatch 1',
        // Only requests safe to send twice: reads, and creates the service deduplicates by Idempotency-Key.
        '  http-request disable-l7-retry if !METH_GET !METH_HEAD !{ req.hdr(idempotency-key) -m found }',
      ]),
      ...listen('strict', strict, ['  retries 0']),
    ],
    'SIGUSR1',
  );
  return { ...haproxy, origins: { retrying: `http://127.0.0.1:${retrying}`, strict: `http://127.0.0.1:${strict}` } };
}
export type Balancer = Awaited<ReturnType<typeof startHaproxy>>;
