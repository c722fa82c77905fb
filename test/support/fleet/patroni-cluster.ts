import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../database-server.js';
import { pollUntil } from '../poll.js';
import { Daemon, daemon, runOnce, workDirectory } from './debian-services.js';
import { createPgBackRest, PgBackRest, pollUntilPrimary, RestoredServer } from './pgbackrest.js';

/**
 * A PostgreSQL cluster with automatic failover from Debian's packages (`.ci/run` installs them): one etcd, two
 * Patroni nodes running PostgreSQL 15 in synchronous mode, and HAProxy sending connections to the node whose
 * Patroni answers `GET /primary` with 200. Everything listens on 127.0.0.1 in temporary directories, and every
 * process is stopped by its PID. As root, Patroni (and so PostgreSQL) runs as the `postgres` user. Every node
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
  /** A node's own address, bypassing HAProxy. */
  nodeUrl(node: PatroniNode, database?: string, user?: string): string;
  /** The node whose Patroni answers `/primary` with 200, or null. */
  primary(): Promise<PatroniNode | null>;
  /** Resolves when `node` is a streaming synchronous standby (`GET /sync` is 200). */
  waitForSyncStandby(node: PatroniNode, timeoutMs?: number): Promise<void>;
  /** HAProxy's view of each node: 'UP', 'DOWN', or a transition such as 'DOWN 1/2'. */
  haproxyStates(): Promise<Record<string, string>>;
  /** Patroni's REST `POST /switchover` on the current primary; resolves with its answer. */
  switchover(from: PatroniNode, to: PatroniNode): Promise<{ status: number; body: string }>;
  /** `kill -9` of the node's Patroni and of its postmaster. */
  crash(node: PatroniNode): Promise<void>;
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
      const patroni = daemon('patroni', [configFile], { unprivileged: true });
      started.push(patroni);
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
    const [port, stats] = [await freePort(), await freePort()];
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
      'frontend stats',
      '  mode http',
      `  bind 127.0.0.1:${stats}`,
      '  stats enable',
      '  stats uri /stats',
      'listen postgres',
      `  bind 127.0.0.1:${port}`,
      '  option httpchk GET /primary',
      '  http-check expect status 200',
      // A node marked down has its connections closed: clients reconnect, to the new primary.
      `  default-server inter ${settings.interMs} fall ${settings.fall} rise ${settings.rise} on-marked-down shutdown-sessions`,
      ...nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.restPort}`),
      '',
    ].join('\n');
    await writeFile(join(haproxyDir, 'haproxy.cfg'), haproxyConfig);
    const check = await runOnce('haproxy', ['-c', '-f', join(haproxyDir, 'haproxy.cfg')]);
    if (check.code !== 0) throw new Error(`haproxy.cfg is invalid: ${check.output}`);
    haproxy = daemon('haproxy', ['-db', '-f', join(haproxyDir, 'haproxy.cfg')]);

    const haproxyStates = async () => {
      const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
      const [header, ...rows] = csv.trim().split('\n');
      const columns = header.replace(/^# /, '').split(',');
      const [px, sv, status] = ['pxname', 'svname', 'status'].map((name) => columns.indexOf(name));
      const states: Record<string, string> = {};
      for (const row of rows.map((line) => line.split(','))) {
        if (row[px] === 'postgres' && nodes.some((node) => node.name === row[sv])) states[row[sv]] = row[status];
      }
      return states;
    };
    const url = (database = 'postgres', user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${database}`;
    // HAProxy counts a server up until its checks have failed `fall` times: wait until only the primary is.
    await pollUntil(
      async () => {
        const states = await haproxyStates();
        return states.node1 === 'UP' && states.node2 === 'DOWN';
      },
      { timeoutMs: 20_000, intervalMs: 50, what: `HAProxy to lead to the primary only (${haproxy.output()})` },
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
