import { expect } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { ensureBuilt, run } from '../built-service.js';
import { freePort } from '../database-server.js';
import { pollUntil } from '../poll.js';
import { ServiceProcess, startService } from '../service-process.js';
import { Daemon, daemon, runOnce, workDirectory } from './debian-services.js';
import { createPgBackRest, PgBackRest, pollUntilPrimary, RestoredServer } from './pgbackrest.js';

/**
 * A PostgreSQL cluster with automatic failover from Debian's packages (`.ci/run` installs them): one etcd, two
 * Patroni nodes running PostgreSQL 15 in synchronous mode, and HAProxy sending connections to the node whose
 * Patroni answers `GET /primary` with 200, and on a second port to the standbys whose Patroni answers
 * `GET /replica?lag=…` with 200. Everything listens on 127.0.0.1 in temporary directories, and every process is
 * stopped by its PID. As root, Patroni (and so PostgreSQL) runs as the `postgres` user. Every node
 * archives its WAL with pgBackRest into one repository (docs/operating.md, "Backups and restore").
 */

/** Debian's PostgreSQL 15, which the nodes run, and its client programs. */
export const PG_BIN = '/usr/lib/postgresql/15/bin';

/**
 * The settings that shape a failover's window (docs/operating.md, "High availability"), and the WAL archive's loss
 * window ("Backups and restore").
 */
export interface FailoverSettings {
  /** Patroni: seconds the leader key lives without being renewed; a crashed primary's key expires after this. */
  ttl: number;
  /** Patroni: seconds between two runs of its loop. */
  loopWait: number;
  /** Patroni: seconds it retries etcd and PostgreSQL before demoting. Patroni's documentation: loop_wait + 2 x this <= ttl. */
  retryTimeout: number;
  /** HAProxy: check interval (ms), failed checks before a node is marked down, passed ones before up. */
  interMs: number;
  fall: number;
  rise: number;
  /** PostgreSQL's `archive_timeout` (s): a segment with any write in it is switched and archived within this. */
  archiveTimeout: number;
}

// Shorter than Patroni's defaults (30/10/10), so the crash case fits a bounded suite; loop_wait + 2 x retry_timeout
// stays within ttl, the rule Patroni's documentation sets. Patroni 3.0 accepts a ttl below 20; later versions do not.
// archive_timeout: far below a production setting (docs/operating.md, "Backups and restore"), so that the
// point-in-time case waits little for its WAL to be archived.
export const TEST_SETTINGS: FailoverSettings = {
  ttl: 10,
  loopWait: 2,
  retryTimeout: 4,
  interMs: 500,
  fall: 2,
  rise: 1,
  archiveTimeout: 5,
};

/** The service's role, an ordinary one as in production, and the database it owns. */
export const APP_ROLE = 'animal_store';
export const DATABASE = 'animal_store';

export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  patroni: Daemon;
  /** The running postmaster's PID, from its `postmaster.pid`, or null when none runs. */
  postmasterPid(): Promise<number | null>;
  /** `GET` on this node's REST API: the status, or null when it does not answer. */
  rest(path: string): Promise<number | null>;
}

export interface ClusterArchive {
  /** A full backup from the current primary: how long it took. */
  backup(): Promise<{ durationMs: number }>;
  /** `pgbackrest info`, as text. */
  info(): Promise<string>;
  /** The archive restored aside to `target` and started (pgbackrest.ts); stopped with the cluster at the latest. */
  restoreToTime(target: string): Promise<RestoredServer>;
}

export interface PatroniCluster {
  nodes: PatroniNode[];
  settings: FailoverSettings;
  /** The read-write address: HAProxy's port, which leads to the primary. */
  port: number;
  url(database?: string, user?: string): string;
  /** The read-only address: HAProxy's second port, which leads to a standby (none while none answers `/replica`). */
  replicaUrl(database?: string, user?: string): string;
  /** A node's own address, bypassing HAProxy. */
  nodeUrl(node: PatroniNode, database?: string, user?: string): string;
  /** The node whose Patroni answers `/primary` with 200, or null. */
  primary(): Promise<PatroniNode | null>;
  /** Resolves when `node` is a streaming synchronous standby (`GET /sync` is 200). */
  waitForSyncStandby(node: PatroniNode, timeoutMs?: number): Promise<void>;
  /** HAProxy's view of each node behind one port: 'UP', 'DOWN', or a transition such as 'DOWN 1/2'. */
  haproxyStates(port?: 'primary' | 'replica'): Promise<Record<string, string>>;
  /** Patroni's REST `PATCH /config`: a change to the dynamic configuration, which every node applies within loop_wait. */
  patchConfig(change: object): Promise<void>;
  /** Patroni's REST `POST /switchover` on the current primary; resolves with its answer. */
  switchover(from: PatroniNode, to: PatroniNode): Promise<{ status: number; body: string }>;
  /** `kill -9` of the node's Patroni and of its postmaster. */
  crash(node: PatroniNode): Promise<void>;
  /** SIGTERM to the node's Patroni, which stops its PostgreSQL (fast shutdown) first; resolves once it has exited. */
  stopNode(node: PatroniNode): Promise<void>;
  /** The node's Patroni started again on its configuration: it starts PostgreSQL, which rejoins as a standby. */
  startNode(node: PatroniNode): void;
  /** pgBackRest on the cluster: WAL archived continuously since the start (the stanza is created and checked). */
  archive: ClusterArchive;
  /** What each process wrote, for a failed test's message. */
  output(): string;
  /** Stops every process started here (bounded), then removes the data. */
  stop(): Promise<void>;
}

async function answers(url: string, init?: RequestInit): Promise<number | null> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return null;
  }
}

function killIfRunning(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startPatroniCluster(settings: FailoverSettings): Promise<PatroniCluster> {
  if (!existsSync(join(PG_BIN, 'postgres'))) {
    throw new Error(`No PostgreSQL 15 under ${PG_BIN}: apt-get install -y postgresql-15`);
  }
  const started: Daemon[] = [];
  const directories: string[] = [];
  const nodes: PatroniNode[] = [];
  let haproxy: Daemon | undefined;
  const postmasterPids = new Set<number>();
  const nodeConfigs = new Map<string, string>();
  const patroniConfigs = new Map<string, string>();
  const launchPatroni = (name: string) => {
    const patroni = daemon('patroni', [patroniConfigs.get(name)!], { unprivileged: true });
    started.push(patroni);
    return patroni;
  };
  let pgBackRest: PgBackRest | undefined;

  const stop = async () => {
    // Patroni stops its PostgreSQL (fast shutdown) on SIGTERM; each stop is bounded by a SIGKILL after 10 s.
    await Promise.allSettled([haproxy, ...started].filter((d) => d !== undefined).map((d) => d.stop()));
    for (const node of nodes) {
      const pid = await node.postmasterPid();
      if (pid !== null) postmasterPids.add(pid);
    }
    for (const pid of postmasterPids) killIfRunning(pid, 'SIGKILL');
    await pollUntil(() => [...postmasterPids].every((pid) => !running(pid)), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the PostgreSQL servers to exit',
    }).catch(() => undefined);
    await Promise.allSettled(directories.map((dir) => rm(dir, { recursive: true, force: true })));
    await pgBackRest?.remove();
  };

  try {
    const etcdDir = await workDirectory('etcd');
    directories.push(etcdDir);
    const [etcdClient, etcdPeer] = [await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const etcd = daemon('etcd', [
      '--name',
      'animal-store-etcd',
      '--data-dir',
      join(etcdDir, 'data'),
      '--listen-client-urls',
      etcdUrl,
      '--advertise-client-urls',
      etcdUrl,
      '--listen-peer-urls',
      `http://127.0.0.1:${etcdPeer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster',
      `animal-store-etcd=http://127.0.0.1:${etcdPeer}`,
      '--log-level',
      'warn',
    ]);
    started.push(etcd);
    await pollUntil(async () => (await answers(`${etcdUrl}/health`)) === 200, {
      timeoutMs: 20_000,
      what: `etcd to answer (${etcd.output()})`,
    });

    pgBackRest = await createPgBackRest();
    const scope = `animal-store-${etcdClient}`;
    for (const name of ['node1', 'node2']) {
      const dir = await workDirectory(`patroni-${name}`);
      directories.push(dir);
      const [pgPort, restPort] = [await freePort(), await freePort()];
      const dataDir = join(dir, 'data');
      const backRestConfig = await pgBackRest.configure({ dir, dataDir, pgPort });
      nodeConfigs.set(name, backRestConfig);
      const config = {
        scope,
        name,
        log: { level: 'WARNING' },
        restapi: { listen: `127.0.0.1:${restPort}`, connect_address: `127.0.0.1:${restPort}` },
        etcd3: { host: `127.0.0.1:${etcdClient}` },
        bootstrap: {
          dcs: {
            ttl: settings.ttl,
            loop_wait: settings.loopWait,
            retry_timeout: settings.retryTimeout,
            synchronous_mode: true,
            postgresql: {
              use_pg_rewind: true,
              // A throw-away cluster: no fsync. synchronous_commit stays on: a commit waits for the standby.
              parameters: {
                fsync: 'off',
                full_page_writes: 'off',
                max_connections: 100,
                wal_log_hints: 'on',
                archive_mode: 'on',
                archive_timeout: settings.archiveTimeout,
                // Per statement and per server, counted as each ends: which server answered a route's queries.
                shared_preload_libraries: 'pg_stat_statements',
              },
            },
          },
          initdb: [{ encoding: 'UTF8' }, { auth: 'trust' }],
        },
        postgresql: {
          listen: `127.0.0.1:${pgPort}`,
          connect_address: `127.0.0.1:${pgPort}`,
          data_dir: dataDir,
          bin_dir: PG_BIN,
          pgpass: join(dir, 'pgpass'),
          authentication: {
            superuser: { username: 'postgres', password: 'postgres' },
            replication: { username: 'replicator', password: 'replicator' },
            rewind: { username: 'postgres', password: 'postgres' },
          },
          // Each host's own pgBackRest configuration (its data directory), so the command is set per node.
          parameters: { unix_socket_directories: dir, archive_command: pgBackRest.archiveCommand(backRestConfig) },
          pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust'],
        },
        tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
      };
      const configFile = join(dir, 'patroni.yml');
      // JSON is YAML.
      await writeFile(configFile, JSON.stringify(config, null, 2), { mode: 0o644 });
      patroniConfigs.set(name, configFile);
      const patroni = launchPatroni(name);
      const node: PatroniNode = {
        name,
        pgPort,
        restPort,
        dataDir,
        patroni,
        postmasterPid: async () => {
          const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
          const pid = Number(text.split('\n')[0]);
          return Number.isInteger(pid) && pid > 0 && running(pid) ? pid : null;
        },
        rest: (path) => answers(`http://127.0.0.1:${restPort}${path}`),
      };
      nodes.push(node);
      // The first node bootstraps the cluster; the second then clones it.
      await pollUntil(async () => (await node.rest(name === 'node1' ? '/primary' : '/sync')) === 200, {
        timeoutMs: 90_000,
        intervalMs: 200,
        what: `Patroni ${name} to be ${name === 'node1' ? 'primary' : 'a synchronous standby'} (${patroni.output()})`,
      });
      const pid = await node.postmasterPid();
      if (pid !== null) postmasterPids.add(pid);
    }

    const haproxyDir = await workDirectory('haproxy-pg');
    directories.push(haproxyDir);
    const [port, replicaPort, stats] = [await freePort(), await freePort(), await freePort()];
    const listen = (proxy: string, on: number, check: string) => [
      `listen ${proxy}`,
      `  bind 127.0.0.1:${on}`,
      `  option httpchk GET ${check}`,
      ...nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.restPort}`),
    ];
    const haproxyConfig = [
      'global',
      '  maxconn 1000',
      'defaults',
      '  mode tcp',
      '  timeout connect 1s',
      '  timeout check 2s',
      // Longer than the service's pool keeps a connection idle: HAProxy never closes a pooled connection itself.
      '  timeout client 30m',
      '  timeout server 30m',
      '  http-check expect status 200',
      // A node marked down has its connections closed: clients reconnect, to the new primary or another standby.
      `  default-server inter ${settings.interMs} fall ${settings.fall} rise ${settings.rise} on-marked-down shutdown-sessions`,
      'frontend stats',
      '  mode http',
      `  bind 127.0.0.1:${stats}`,
      '  stats enable',
      '  stats uri /stats',
      ...listen('primary', port, '/primary'),
      // Patroni's byte bound only leaves out a standby that stopped replaying altogether; the service's own bound
      // on reads, in time, is DATABASE_REPLICA_MAX_LAG_MS (docs/operating.md, "Reading from replicas").
      ...listen('replica', replicaPort, '/replica?lag=16MB'),
      '',
    ].join('\n');
    await writeFile(join(haproxyDir, 'haproxy.cfg'), haproxyConfig);
    const check = await runOnce('haproxy', ['-c', '-f', join(haproxyDir, 'haproxy.cfg')]);
    if (check.code !== 0) throw new Error(`haproxy.cfg is invalid: ${check.output}`);
    haproxy = daemon('haproxy', ['-db', '-f', join(haproxyDir, 'haproxy.cfg')]);

    const haproxyStates = async (proxy: 'primary' | 'replica' = 'primary') => {
      const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
      const [header, ...rows] = csv.trim().split('\n');
      const columns = header.replace(/^# /, '').split(',');
      const [px, sv, status] = ['pxname', 'svname', 'status'].map((name) => columns.indexOf(name));
      const states: Record<string, string> = {};
      for (const row of rows.map((line) => line.split(','))) {
        if (row[px] === proxy && nodes.some((node) => node.name === row[sv])) states[row[sv]] = row[status];
      }
      return states;
    };
    const url = (database = 'postgres', user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${database}`;
    // HAProxy counts a server up until its checks have failed `fall` times: wait until only the primary is, and
    // only the standby on the replica port.
    await pollUntil(
      async () => {
        const [primaryPort, replicas] = await Promise.all([haproxyStates('primary'), haproxyStates('replica')]);
        return [primaryPort.node1, primaryPort.node2, replicas.node1, replicas.node2].join() === 'UP,DOWN,DOWN,UP';
      },
      {
        timeoutMs: 20_000,
        intervalMs: 50,
        what: `HAProxy to lead to the primary and the standby (${haproxy.output()})`,
      },
    );
    await pollUntilPrimary(url(), { timeoutMs: 20_000, what: `HAProxy to lead to the primary (${haproxy.output()})` });

    const primary = async () => {
      const statuses = await Promise.all(nodes.map((node) => node.rest('/primary')));
      return nodes.find((_, i) => statuses[i] === 200) ?? null;
    };
    const archiver = pgBackRest;
    /** pgBackRest runs on the primary's host, with that host's configuration. */
    const primaryConfig = async () => {
      const leader = await primary();
      if (!leader)
        throw new Error(`No primary to run pgBackRest on (${nodes.map((n) => n.patroni.output()).join('\n')})`);
      return nodeConfigs.get(leader.name)!;
    };
    // The stanza, then `check`: it switches a WAL segment and waits for it in the repository.
    await archiver.run(await primaryConfig(), ['stanza-create']);
    await archiver.run(await primaryConfig(), ['check']);

    return {
      nodes,
      settings,
      port,
      url,
      replicaUrl: (database = 'postgres', user = 'postgres') =>
        `postgres://${user}@127.0.0.1:${replicaPort}/${database}`,
      nodeUrl: (node, database = 'postgres', user = 'postgres') =>
        `postgres://${user}@127.0.0.1:${node.pgPort}/${database}`,
      primary,
      waitForSyncStandby: async (node, timeoutMs = 60_000) => {
        await pollUntil(async () => (await node.rest('/sync')) === 200, {
          timeoutMs,
          intervalMs: 200,
          what: `${node.name} to be a synchronous standby`,
        });
        const pid = await node.postmasterPid();
        if (pid !== null) postmasterPids.add(pid);
      },
      haproxyStates,
      patchConfig: async (change) => {
        const response = await fetch(`http://127.0.0.1:${((await primary()) ?? nodes[0]).restPort}/config`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(change),
          signal: AbortSignal.timeout(10_000),
        });
        if (response.status !== 200)
          throw new Error(`PATCH /config answered ${response.status}: ${await response.text()}`);
      },
      switchover: async (from, to) => {
        const response = await fetch(`http://127.0.0.1:${from.restPort}/switchover`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ leader: from.name, candidate: to.name }),
          signal: AbortSignal.timeout(60_000),
        });
        return { status: response.status, body: await response.text() };
      },
      crash: async (node) => {
        const postmaster = await node.postmasterPid();
        if (postmaster === null) throw new Error(`${node.name} runs no PostgreSQL`);
        postmasterPids.add(postmaster);
        killIfRunning(node.patroni.pid, 'SIGKILL');
        killIfRunning(postmaster, 'SIGKILL');
      },
      stopNode: (node) => node.patroni.stop(),
      startNode: (node) => {
        node.patroni = launchPatroni(node.name);
      },
      archive: {
        backup: async () => {
          const started = Date.now();
          await archiver.run(await primaryConfig(), ['--type=full', 'backup'], 300_000);
          return { durationMs: Date.now() - started };
        },
        info: async () => archiver.run(await primaryConfig(), ['info']),
        restoreToTime: async (target) => archiver.restoreToTime(await primaryConfig(), target, PG_BIN),
      },
      output: () =>
        [
          ...nodes.map((node) => `${node.name}: ${node.patroni.output()}`),
          `haproxy: ${haproxy?.output() ?? ''}`,
          `etcd: ${etcd.output()}`,
        ].join('\n'),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The service's role and database on `cluster`, migrated by the built CLI, then the built service on HAProxy's
 * primary port as in production (`env` added), ready.
 */
export async function startServiceOnCluster(
  cluster: PatroniCluster,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  await ensureBuilt();
  const admin = new pg.Client({ connectionString: cluster.url() });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${APP_ROLE} LOGIN`);
    await admin.query(`CREATE DATABASE ${DATABASE} OWNER ${APP_ROLE}`);
  } finally {
    await admin.end();
  }
  const migrated = await run(process.execPath, ['dist/src/cli/migrations.js', 'run'], {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: cluster.url(DATABASE, APP_ROLE),
  });
  expect(migrated).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Applied /) });
  return startService({
    NODE_ENV: 'production',
    DATABASE_URL: cluster.url(DATABASE, APP_ROLE),
    CURSOR_SECRET: randomBytes(32).toString('base64url'),
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '0',
    ...env,
  });
}
