import { expect } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ensureBuilt, run } from '../built-service.js';
import { freePort } from '../database-server.js';
import { pollUntil } from '../poll.js';
import { startService } from '../service-process.js';
import {
  Daemon,
  daemon,
  pgProgram,
  pgUrl,
  isPrimary,
  queryOnce,
  startHaproxyOn,
  statusOf,
  workDirectory,
} from './debian-services.js';
import { createPgBackRest } from './pgbackrest.js';

/**
 * From Debian's packages: etcd, two Patroni nodes (PostgreSQL 15, synchronous mode) archiving with pgBackRest into one
 * repository, and HAProxy leading to Patroni's `/primary` on one port and to its `/replica?lag=…` on another.
 */

/**
 * What shapes a failover's window (docs/operating.md, "High availability"), below Patroni's defaults (30/10/10) so that
 * the crash case fits a bounded suite: loop_wait + 2 x retry_timeout <= ttl, and Patroni 3.0 accepts a ttl below 20.
 * Patroni's in seconds, HAProxy's check interval in ms; archive_timeout (s) far below a production setting.
 */
export const SETTINGS = { ttl: 10, loopWait: 2, retryTimeout: 4, interMs: 500, fall: 2, rise: 1, archiveTimeout: 5 };

/** The service's role, an ordinary one as in production, and the database it owns. */
export const APP_ROLE = 'animal_store';
export const DATABASE = 'animal_store';

/** Whether `pid` was there to take `signal` (0 only asks). */
function signalled(pid: number, signal: NodeJS.Signals | 0 = 0): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

type PgBackRest = Awaited<ReturnType<typeof createPgBackRest>>;
interface NodeContext {
  etcdClient: number;
  pgBackRest: PgBackRest;
  directories: string[];
  launchPatroni(configFile: string): Daemon;
}

/** A Patroni node's configuration written and its Patroni started, under `cluster.directories`. */
async function startNode(name: string, cluster: NodeContext) {
  const { etcdClient, pgBackRest } = cluster;
  const dir = await workDirectory(`patroni-${name}`);
  cluster.directories.push(dir);
  const [pgPort, restPort] = [await freePort(), await freePort()];
  const dataDir = join(dir, 'data');
  const backRestConfig = await pgBackRest.configure({ dir, dataDir, pgPort });
  const config = {
    scope: `animal-store-${etcdClient}`,
    name,
    log: { level: 'WARNING' },
    restapi: { listen: `127.0.0.1:${restPort}`, connect_address: `127.0.0.1:${restPort}` },
    etcd3: { host: `127.0.0.1:${etcdClient}` },
    bootstrap: {
      dcs: {
        ttl: SETTINGS.ttl,
        loop_wait: SETTINGS.loopWait,
        retry_timeout: SETTINGS.retryTimeout,
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
            archive_timeout: SETTINGS.archiveTimeout,
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
      bin_dir: dirname(pgProgram('postgres')),
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
  };
  const configFile = join(dir, 'patroni.yml');
  // JSON is YAML.
  await writeFile(configFile, JSON.stringify(config, null, 2), { mode: 0o644 });
  return {
    name,
    pgPort,
    restPort,
    configFile,
    backRestConfig,
    patroni: cluster.launchPatroni(configFile),
    /** The running postmaster's PID, from its `postmaster.pid`, or null when none runs. */
    postmasterPid: async () => {
      const pid = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 && signalled(pid) ? pid : null;
    },
    rest: (path: string) => statusOf(`http://127.0.0.1:${restPort}${path}`),
  };
}

export type PatroniNode = Awaited<ReturnType<typeof startNode>>;

/** A JSON request to a node's Patroni REST API: its status and body. */
async function restCall(node: PatroniNode, method: string, path: string, body: object, timeoutMs: number) {
  const response = await fetch(`http://127.0.0.1:${node.restPort}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: response.status, body: await response.text() };
}

export async function startPatroniCluster() {
  const started: Daemon[] = [];
  const directories: string[] = [];
  const nodes: PatroniNode[] = [];
  const postmasterPids = new Set<number>();
  const pgBackRest = await createPgBackRest();
  const launchPatroni = (configFile: string) => {
    const patroni = daemon('patroni', [configFile], { unprivileged: true });
    started.push(patroni);
    return patroni;
  };
  const notePostmaster = async (node: PatroniNode) => {
    const pid = await node.postmasterPid();
    if (pid !== null) postmasterPids.add(pid);
  };

  const stop = async () => {
    // Patroni stops its PostgreSQL (fast shutdown) on SIGTERM.
    await Promise.allSettled(started.map((d) => d.stop('SIGTERM')));
    for (const node of nodes) await notePostmaster(node);
    for (const pid of postmasterPids) signalled(pid, 'SIGKILL');
    await pollUntil(() => [...postmasterPids].every((pid) => !signalled(pid)), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the PostgreSQL servers to exit',
    }).catch(() => undefined);
    await Promise.allSettled(directories.map((dir) => rm(dir, { recursive: true, force: true })));
    await pgBackRest.remove();
  };

  try {
    const etcdDir = await workDirectory('etcd');
    directories.push(etcdDir);
    const [etcdClient, etcdPeer] = [await freePort(), await freePort()];
    const [etcdUrl, peerUrl] = [`http://127.0.0.1:${etcdClient}`, `http://127.0.0.1:${etcdPeer}`];
    const etcdOptions = {
      name: 'animal-store-etcd',
      'data-dir': join(etcdDir, 'data'),
      'listen-client-urls': etcdUrl,
      'advertise-client-urls': etcdUrl,
      'listen-peer-urls': peerUrl,
      'initial-advertise-peer-urls': peerUrl,
      'initial-cluster': `animal-store-etcd=${peerUrl}`,
      'log-level': 'warn',
    };
    const etcd = daemon(
      'etcd',
      Object.entries(etcdOptions).map(([name, value]) => `--${name}=${value}`),
    );
    started.push(etcd);
    await etcd.until(async () => (await statusOf(`${etcdUrl}/health`)) === 200, {
      timeoutMs: 20_000,
      what: 'etcd to answer',
    });
    for (const name of ['node1', 'node2']) {
      const node = await startNode(name, { etcdClient, pgBackRest, directories, launchPatroni });
      nodes.push(node);
      // The first node bootstraps the cluster; the second then clones it.
      await node.patroni.until(async () => (await node.rest(name === 'node1' ? '/primary' : '/sync')) === 200, {
        timeoutMs: 90_000,
        intervalMs: 200,
        what: `Patroni ${name} to be ${name === 'node1' ? 'primary' : 'a synchronous standby'}`,
      });
      await notePostmaster(node);
    }

    const [port, replicaPort] = [await freePort(), await freePort()];
    const listen = (proxy: string, on: number, check: string) => [
      `listen ${proxy}`,
      `  bind 127.0.0.1:${on}`,
      `  option httpchk GET ${check}`,
      ...nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.restPort}`),
    ];
    const balancer = await startHaproxyOn(
      'haproxy-pg',
      [
        '  mode tcp',
        // Longer than the service's pool keeps a connection idle: HAProxy never closes a pooled connection itself.
        '  timeout client 30m',
        '  timeout server 30m',
        '  http-check expect status 200',
        // A node marked down has its connections closed: clients reconnect, to the new primary or another standby.
        `  default-server inter ${SETTINGS.interMs} fall ${SETTINGS.fall} rise ${SETTINGS.rise} on-marked-down shutdown-sessions`,
        ...listen('primary', port, '/primary'),
        // Patroni's byte bound only leaves out a standby that stopped replaying altogether; the service's own bound
        // on reads, in time, is DATABASE_REPLICA_MAX_LAG_MS (docs/operating.md, "Reading from replicas").
        ...listen('replica', replicaPort, '/replica?lag=16MB'),
      ],
      'SIGTERM',
    );
    started.push(balancer);
    const url = pgUrl(port);
    // HAProxy counts a server up until its checks have failed `fall` times: wait until only the primary is, and
    // only the standby on the replica port.
    await balancer.until(
      async () => {
        const { primary, replica } = await balancer.states();
        return [primary.node1, primary.node2, replica.node1, replica.node2].join() === 'UP,DOWN,DOWN,UP';
      },
      { timeoutMs: 20_000, intervalMs: 50, what: 'HAProxy to lead to the primary and the standby' },
    );
    await balancer.until(() => isPrimary(url()), { timeoutMs: 20_000, what: 'HAProxy to lead to the primary' });

    /** The node whose Patroni answers `/primary` with 200, or null. */
    const primary = async () => {
      const statuses = await Promise.all(nodes.map((node) => node.rest('/primary')));
      return nodes.find((_, i) => statuses[i] === 200) ?? null;
    };
    const output = () =>
      [...nodes.map((node) => `${node.name}: ${node.patroni.output()}`), balancer.output(), etcd.output()].join('\n');
    /** pgBackRest runs on the primary's host, with that host's configuration. */
    const leaderConfig = async () => {
      const leader = await primary();
      if (!leader) throw new Error(`No primary to run pgBackRest on (${output()})`);
      return leader.backRestConfig;
    };
    const archiver = async (args: string[], timeoutMs?: number) =>
      pgBackRest.run(await leaderConfig(), args, timeoutMs);
    // The stanza, then `check`: it switches a WAL segment and waits for it in the repository.
    await archiver(['stanza-create']);
    await archiver(['check']);

    return {
      nodes,
      /** HAProxy's ports: the read-write one, which leads to the primary, and the read-only one, to a standby. */
      url,
      replicaUrl: pgUrl(replicaPort),
      /** A node's own address, bypassing HAProxy. */
      nodeUrl: (node: PatroniNode, database?: string) => pgUrl(node.pgPort)(database),
      primary,
      /** Resolves when `node` is a streaming synchronous standby (`GET /sync` is 200). */
      waitForSyncStandby: async (node: PatroniNode) => {
        await pollUntil(async () => (await node.rest('/sync')) === 200, {
          timeoutMs: 60_000,
          intervalMs: 200,
          what: `${node.name} to be a synchronous standby`,
        });
        await notePostmaster(node);
      },
      /** HAProxy's view of each node behind its primary port. */
      haproxyStates: async () => (await balancer.states()).primary,
      /** A change to Patroni's dynamic configuration, which every node applies within loop_wait. */
      patchConfig: async (change: object) => {
        const answer = await restCall((await primary()) ?? nodes[0], 'PATCH', '/config', change, 10_000);
        if (answer.status !== 200) throw new Error(`PATCH /config answered ${answer.status}: ${answer.body}`);
      },
      /** Patroni's `POST /switchover` on the current primary: its answer. */
      switchover: (from: PatroniNode, to: PatroniNode) =>
        restCall(from, 'POST', '/switchover', { leader: from.name, candidate: to.name }, 60_000),
      /** `kill -9` of the node's Patroni and of its postmaster. */
      crash: async (node: PatroniNode) => {
        const postmaster = await node.postmasterPid();
        if (postmaster === null) throw new Error(`${node.name} runs no PostgreSQL`);
        postmasterPids.add(postmaster);
        signalled(node.patroni.pid, 'SIGKILL');
        signalled(postmaster, 'SIGKILL');
      },
      /** SIGTERM to the node's Patroni, which stops its PostgreSQL (fast shutdown) first. */
      stopNode: (node: PatroniNode) => node.patroni.stop(),
      /** The node's Patroni started again: it starts PostgreSQL, which rejoins as a standby. */
      startNode: (node: PatroniNode) => void (node.patroni = launchPatroni(node.configFile)),
      /** `pgbackrest <args>` on the primary's host: WAL has been archived continuously since the start. */
      pgBackRest: archiver,
      /** The archive restored aside to `target` and started (pgbackrest.ts); stopped with the cluster at the latest. */
      restoreToTime: async (target: string) => pgBackRest.restoreToTime(await leaderConfig(), target),
      output,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
export type PatroniCluster = Awaited<ReturnType<typeof startPatroniCluster>>;

/** The service's role and database on `cluster`, migrated, then the built service on HAProxy's primary port, ready. */
export async function startServiceOnCluster(cluster: PatroniCluster, env: Record<string, string>) {
  await ensureBuilt();
  await queryOnce(cluster.url(), `CREATE ROLE ${APP_ROLE} LOGIN`);
  await queryOnce(cluster.url(), `CREATE DATABASE ${DATABASE} OWNER ${APP_ROLE}`);
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
