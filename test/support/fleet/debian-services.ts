import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, THROWAWAY_CLUSTER_FLAGS } from '../database-server.js';
import { pollUntil } from '../poll.js';

/**
 * The fleet's infrastructure from Debian's packages (`.ci/run` installs them): a PostgreSQL cluster of its own,
 * PgBouncer in transaction mode, HAProxy. Each runs in the foreground on 127.0.0.1, in a temporary directory,
 * and is stopped by its PID. PostgreSQL and PgBouncer refuse to run as root: as root they run as the `postgres`
 * user the postgresql package creates (through setpriv, which execs, so the PID is the server's own).
 */

export interface Daemon {
  pid: number;
  /** What it wrote to stdout and stderr. */
  output(): string;
  /** Resolves when the process has exited, whoever stopped it. */
  exited: Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const asRoot = process.getuid?.() === 0;
const SERVICE_USER = 'postgres';

function commandLine(command: string, args: string[], unprivileged: boolean): [string, string[]] {
  return unprivileged && asRoot
    ? ['setpriv', ['--reuid', SERVICE_USER, '--regid', SERVICE_USER, '--init-groups', '--', command, ...args]]
    : [command, args];
}

/** Runs a command to its end (killed after `timeoutMs`): its exit code and output. */
export function runOnce(command: string, args: string[], { unprivileged = false, timeoutMs = 120_000 } = {}) {
  const [file, argv] = commandLine(command, args, unprivileged);
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => (output += `could not start ${command}: ${error.message}\n`));
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

export function daemon(command: string, args: string[], { unprivileged = false } = {}): Daemon {
  const [file, argv] = commandLine(command, args, unprivileged);
  const child: ChildProcess = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', (error) => (output += `could not start ${command}: ${error.message}\n`));
  return {
    pid: child.pid ?? -1,
    output: () => output,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A directory the unprivileged servers can write. */
export async function workDirectory(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `animal-store-fleet-${name}-`));
  if (asRoot) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, SERVICE_USER]).toString()));
    await chown(dir, uid, gid);
  }
  await chmod(dir, 0o755);
  return dir;
}

export function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const found = versions.map((v) => join(root, v, 'bin')).find((bin) => existsSync(join(bin, 'postgres')));
  if (!found) throw new Error('No Debian PostgreSQL server under /usr/lib/postgresql: apt-get install -y postgresql');
  return found;
}

export interface PostgresCluster extends Daemon {
  port: number;
  /** Superuser `postgres` (trust authentication: a throw-away cluster on 127.0.0.1). */
  url(database?: string, user?: string): string;
}

export async function startPostgres(): Promise<PostgresCluster> {
  const dir = await workDirectory('pg');
  const bin = postgresBin();
  const data = join(dir, 'data');
  const init = await runOnce(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
    {
      unprivileged: true,
    },
  );
  if (init.code !== 0) throw new Error(`initdb failed: ${init.output}`);
  const port = await freePort();
  const server = daemon(
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      ...THROWAWAY_CLUSTER_FLAGS,
      '-c',
      'max_connections=200',
    ],
    { unprivileged: true },
  );
  const url = (database = 'postgres', user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${database}`;
  await pollUntil(
    async () => {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      await client.end();
      return true;
    },
    { timeoutMs: 30_000, what: `PostgreSQL to accept connections (${server.output()})` },
  );
  return {
    ...server,
    port,
    url,
    stop: async () => {
      await server.stop('SIGINT'); // fast shutdown
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface PgBouncer extends Daemon {
  port: number;
  url(database: string, user: string): string;
}

/**
 * PgBouncer in transaction mode for every database of `postgres`, with no `ignore_startup_parameters`: a
 * client that sends a startup parameter it does not know is refused, as in the default configuration.
 */
export async function startPgBouncer(postgres: PostgresCluster, users: string[], poolSize: number): Promise<PgBouncer> {
  const dir = await workDirectory('pgbouncer');
  const port = await freePort();
  await writeFile(join(dir, 'userlist.txt'), users.map((user) => `"${user}" ""`).join('\n') + '\n', { mode: 0o644 });
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    [
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
      'max_prepared_statements = 0',
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ]
      .filter((line) => !line.startsWith('max_prepared_statements')) // PgBouncer 1.21+ only
      .join('\n'),
    { mode: 0o644 },
  );
  const bouncer = daemon('pgbouncer', [join(dir, 'pgbouncer.ini')], { unprivileged: true });
  const url = (database: string, user: string) => `postgres://${user}@127.0.0.1:${port}/${database}`;
  await pollUntil(
    async () => {
      const client = new pg.Client({ connectionString: url('postgres', 'postgres') });
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return true;
    },
    { timeoutMs: 20_000, what: `PgBouncer to accept connections (${bouncer.output()})` },
  );
  return {
    ...bouncer,
    port,
    url,
    stop: async () => {
      await bouncer.stop('SIGINT');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface BalancerSettings {
  /** Health-check interval (ms) and how many failed or passed checks mark a server down or up. */
  interMs: number;
  fall: number;
  rise: number;
}

export interface Balancer extends Daemon {
  /** Frontends: `retrying` re-sends GETs and creates carrying an Idempotency-Key on a failed connection or an empty answer; `strict` never retries. */
  origins: { retrying: string; strict: string };
  /** Each backend's view of each server: 'UP', 'DOWN', or a transition such as 'UP 1/2'. */
  states(): Promise<Record<'retrying' | 'strict', Record<string, string>>>;
}

/** HAProxy in front of `servers` (name -> port), health-checking `/health/ready`. */
export async function startHaproxy(servers: Record<string, number>, settings: BalancerSettings): Promise<Balancer> {
  const dir = await workDirectory('haproxy');
  const [retrying, strict, stats] = [await freePort(), await freePort(), await freePort()];
  const backend = (name: string, retries: string[]) => [
    `backend ${name}`,
    '  option httpchk GET /health/ready',
    '  http-check expect status 200',
    // Keep-Alive is hop-by-hop: the instance's `timeout=72` describes its own connection to HAProxy. Passed on, it
    // tells clients they may leave a connection idle far longer than HAProxy keeps it (timeout http-keep-alive),
    // and a request sent as HAProxy closes it is lost.
    '  http-response del-header keep-alive',
    ...retries,
    `  default-server inter ${settings.interMs} fall ${settings.fall} rise ${settings.rise}`,
    ...Object.entries(servers).map(([server, port]) => `  server ${server} 127.0.0.1:${port} check`),
  ];
  const config = [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  option forwardfor',
    '  timeout connect 1s',
    // Without it a check may take only `inter`: on a busy machine a healthy instance would be marked down.
    '  timeout check 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout http-keep-alive 10s',
    'frontend retrying',
    `  bind 127.0.0.1:${retrying}`,
    '  default_backend retrying',
    'frontend strict',
    `  bind 127.0.0.1:${strict}`,
    '  default_backend strict',
    'frontend stats',
    `  bind 127.0.0.1:${stats}`,
    '  stats enable',
    '  stats uri /stats',
    ...backend('retrying', [
      '  retries 2',
      '  retry-on conn-failure empty-response response-timeout',
      '  option redispatch 1',
      // Only requests safe to send twice: reads, and creates the service deduplicates by Idempotency-Key.
      '  http-request disable-l7-retry if !METH_GET !METH_HEAD !{ req.hdr(idempotency-key) -m found }',
    ]),
    ...backend('strict', ['  retries 0']),
    '',
  ].join('\n');
  await writeFile(join(dir, 'haproxy.cfg'), config);
  const check = await runOnce('haproxy', ['-c', '-f', join(dir, 'haproxy.cfg')]);
  if (check.code !== 0) throw new Error(`haproxy.cfg is invalid: ${check.output}`);
  const haproxy = daemon('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')]);
  const states = async () => {
    const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
    const [header, ...rows] = csv.trim().split('\n');
    const columns = header.replace(/^# /, '').split(',');
    const [px, sv, status] = ['pxname', 'svname', 'status'].map((name) => columns.indexOf(name));
    const result: Record<'retrying' | 'strict', Record<string, string>> = { retrying: {}, strict: {} };
    for (const row of rows.map((line) => line.split(','))) {
      if ((row[px] === 'retrying' || row[px] === 'strict') && row[sv] in servers)
        result[row[px]][row[sv]] = row[status];
    }
    return result;
  };
  await pollUntil(() => states().then(() => true), {
    timeoutMs: 10_000,
    what: `HAProxy to start (${haproxy.output()})`,
  });
  return {
    ...haproxy,
    origins: { retrying: `http://127.0.0.1:${retrying}`, strict: `http://127.0.0.1:${strict}` },
    states,
    stop: async () => {
      await haproxy.stop('SIGUSR1'); // soft stop: finishes what it holds
      await rm(dir, { recursive: true, force: true });
    },
  };
}
