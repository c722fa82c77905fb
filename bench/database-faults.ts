import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chown, mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { built, freePort, root, serviceEnv, startScratchCluster, startServer } from './server-process.js';

/**
 * `npm run bench:faults [-- --seconds 10] [--main path/to/main.js]`: the built service (production settings)
 * against a PostgreSQL of its own that admits 6 connections, reached through a TCP proxy, under 40 requests at a
 * time (creates and lists alternating). For each fault (3 free slots, read-only, full disk, a network partition)
 * it prints the answers by status, how long they took, and the lines the service logged: fault lines by SQLSTATE
 * and error lines (with a stack). `--main` measures another build (e.g. the previous version's dist/src/main.js).
 */
const KEY = 'faults-bench-key-0123456789abcdef';
const CONCURRENCY = 40;
const MAX_CONNECTIONS = 6;

const argument = (name: string, fallback: string) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? process.argv[index + 1] : fallback;
};
const SECONDS = Number(argument('seconds', '10'));
const MAIN = argument('main', join(root, 'dist', 'src', 'main.js'));

const { postgresUser } = (await import(built('../dev/postgres-user-access.js'))) as {
  postgresUser: () => { uid: number; gid: number } | null;
};
// The tests' proxy (dev/tcp-proxy.ts), from the build: bench/ compiles on its own.
const { startTcpProxy } = (await import(built('../dev/tcp-proxy.js'))) as {
  startTcpProxy: (
    targetPort: number,
  ) => Promise<{ port: number; forward(): void; blackHole(): void; close(): Promise<void> }>;
};

interface Outcome {
  byStatus: Record<string, number>;
  durationsMs: number[];
}

/** CONCURRENCY clients for `seconds`, each alternating a create and a list. */
async function load(origin: string, seconds: number): Promise<Outcome> {
  const outcome: Outcome = { byStatus: {}, durationsMs: [] };
  const until = Date.now() + seconds * 1000;
  let sent = 0;
  const worker = async () => {
    while (Date.now() < until) {
      const create = sent++ % 2 === 0;
      const started = performance.now();
      let status: string;
      try {
        const response = await fetch(`${origin}/v1/pets`, {
          method: create ? 'POST' : 'GET',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: create ? JSON.stringify({ name: 'Faulty', categoryId: 1 }) : undefined,
          signal: AbortSignal.timeout(30_000),
        });
        await response.arrayBuffer();
        status = String(response.status);
      } catch {
        status = 'socket error';
      }
      outcome.durationsMs.push(performance.now() - started);
      outcome.byStatus[status] = (outcome.byStatus[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return outcome;
}

/** What the service logged from `offset` on: fault lines by SQLSTATE, and error (level 50) lines. */
function logSince(logFile: string, offset: number): { faultLines: Record<string, number>; errorLines: number } {
  const faultLines: Record<string, number> = {};
  let errorLines = 0;
  for (const line of readFileSync(logFile, 'utf8').slice(offset).split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { level?: number; context?: string; sqlstate?: string };
    if (entry.context === 'DatabaseFaults') faultLines[entry.sqlstate!] = (faultLines[entry.sqlstate!] ?? 0) + 1;
    if (entry.level === 50) errorLines += 1;
  }
  return { faultLines, errorLines };
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
};

async function main(): Promise<void> {
  const cluster = await startScratchCluster({
    postgresFlags: ['-c', `max_connections=${MAX_CONNECTIONS}`, '-c', 'superuser_reserved_connections=0'],
  });
  const { url, directory: scratch } = cluster;
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  // The service reaches the cluster through the proxy: the same URL on the proxy's port.
  const viaProxy = new URL(url);
  const database = viaProxy.pathname.slice(1);
  const proxy = await startTcpProxy(Number(viaProxy.port));
  viaProxy.port = String(proxy.port);
  const servicePort = await freePort();
  const logFile = join(scratch, 'service.log');
  const service = await startServer({
    command: process.execPath,
    args: [MAIN],
    cwd: root,
    env: {
      ...serviceEnv(servicePort, KEY),
      DATABASE_URL: viaProxy.toString(),
      MIGRATIONS_RUN: 'true',
      // Shedding on the event loop's delay measures how busy this machine is, not the database's faults.
      LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: '0',
    },
    logFile,
    readyUrl: `http://127.0.0.1:${servicePort}/health/ready`,
    headers: {},
  });
  const origin = `http://127.0.0.1:${servicePort}`;
  const terminateService = () =>
    sql.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'animal-store'`,
    );
  const servesAgain = async () => {
    for (let tries = 0; tries < 200; tries += 1) {
      const response = await fetch(`${origin}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${KEY}` } });
      await response.arrayBuffer();
      if (response.status === 200) return;
      await new Promise((wake) => setTimeout(wake, 100));
    }
    throw new Error('the service did not serve again');
  };

  const rows: string[][] = [];
  const measure = async (fault: string, during: () => Promise<Outcome>) => {
    // A fault line of the previous fault may still be waiting for its interval to end.
    await new Promise((wake) => setTimeout(wake, 11_000));
    const offset = readFileSync(logFile, 'utf8').length;
    const outcome = await during();
    await new Promise((wake) => setTimeout(wake, 1_500)); // log lines reach the file within a second
    const log = logSince(logFile, offset);
    rows.push([
      fault,
      String(outcome.durationsMs.length),
      Object.entries(outcome.byStatus)
        .map(([status, count]) => `${status}: ${count}`)
        .join(', '),
      `${quantile(outcome.durationsMs, 0.5).toFixed(0)} / ${quantile(outcome.durationsMs, 0.99).toFixed(0)} / ${Math.max(...outcome.durationsMs).toFixed(0)}`,
      Object.entries(log.faultLines)
        .map(([code, count]) => `${code}: ${count}`)
        .join(', ') || '–',
      String(log.errorLines),
    ]);
  };

  try {
    await measure('none (baseline)', () => load(origin, SECONDS));

    await measure('3 free slots of 6', async () => {
      await terminateService();
      const holders = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
      await Promise.all(holders.map((holder) => holder.connect()));
      try {
        return await load(origin, SECONDS);
      } finally {
        await Promise.all(holders.map((holder) => holder.end()));
      }
    });

    await measure('read-only (25006)', async () => {
      await sql.query(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
      await terminateService();
      await servesAgain();
      try {
        return await load(origin, SECONDS);
      } finally {
        await sql.query(`ALTER DATABASE ${database} RESET ALL`);
        await terminateService();
        await servesAgain();
      }
    });

    const tablespace = join(scratch, 'small');
    await mkdir(tablespace);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0755', 'tmpfs', tablespace]);
    if (mounted.status === 0) {
      await measure('full disk (53100)', async () => {
        await mkdir(join(tablespace, 'pg'));
        // As root, the cluster runs as the `postgres` user, which must own a tablespace's directory.
        const owner = process.getuid?.() === 0 ? postgresUser() : null;
        if (owner) await chown(join(tablespace, 'pg'), owner.uid, owner.gid);
        await sql.query(`CREATE TABLESPACE small LOCATION '${join(tablespace, 'pg')}'`);
        await sql.query('ALTER TABLE pets SET TABLESPACE small');
        await sql.query('ALTER INDEX ALL IN TABLESPACE pg_default SET TABLESPACE small');
        const filler = await open(join(tablespace, 'filler'), 'w');
        try {
          for (;;) await filler.write(Buffer.alloc(256 * 1024));
        } catch {
          await filler.close();
        }
        try {
          return await load(origin, SECONDS);
        } finally {
          await rm(join(tablespace, 'filler'));
        }
      });
    } else {
      rows.push(['full disk (53100)', 'not measured: cannot mount a tmpfs here', '', '', '', '']);
    }

    await measure('network partition', async () => {
      proxy.blackHole();
      try {
        return await load(origin, SECONDS);
      } finally {
        proxy.forward();
      }
    });
  } finally {
    await service.stop();
    await proxy.close();
    await sql.end();
    spawnSync('umount', ['-l', join(scratch, 'small')]);
    await cluster.close();
  }

  process.stdout.write(
    `${MAIN}, ${CONCURRENCY} requests at a time for ${SECONDS} s per fault, PostgreSQL max_connections=${MAX_CONNECTIONS}\n\n`,
  );
  const header = ['Fault', 'Requests', 'Answers', 'ms p50 / p99 / max', 'Fault log lines', 'Error lines'];
  for (const row of [header, header.map(() => '---'), ...rows]) process.stdout.write(`| ${row.join(' | ')} |\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
