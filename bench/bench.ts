/**
 * `npm run bench [-- --quick] [-- --floor] [-- --lean] [-- --baseline <dir>] [-- --rounds <n>] [-- --replica] [-- --pin]`: the built service, on Node 24, beside
 * three yardsticks on one PostgreSQL: the same app with the same production features written the usual way
 * (bench/feature-equal-app.ts), the straightforward NestJS + TypeORM app (bench/straightforward-app.ts) and a bare
 * Fastify + pg server (bench/ceiling.ts), taking turns on every route in every round; plus the list latency at
 * 10,000 vs 1,000,000 rows and start-up times; then the targets, pass or fail. With `--floor`, bench/nest-floor.ts
 * takes its turn too; with `--lean`, the same build with the features configuration can turn off turned off
 * (LEAN_ENV); with `--baseline <dir>`, another built checkout of the service (bench/baseline.ts); with `--traced`,
 * the same build tracing every request to a local OTLP sink (TRACED_ENV); with `--replica`, the same build reading
 * from a streaming replica of the database (DATABASE_REPLICA_URL); with `--pin`, the servers on a CPU of their own.
 * Every server's CPU per request is given with PostgreSQL's, and with `--floor` the whole request's against the
 * floor's (LIMITS.overFloor). See docs/performance.md.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchDatabase } from './bench-database.js';
import { issueDatabaseKey, startBenchService, startYardstick, YardstickName } from './bench-service.js';
import { baselineOption } from './baseline.js';
import { startTraceSink } from './trace-sink.js';
import { checkAnswers } from './answers.js';
import { benchRoutes, load, LoadResult, median, sequentialLatency } from './load.js';
import {
  ratios,
  ratioTable,
  rssRatio,
  resultsTable,
  RouteSummary,
  ServerName,
  summarise,
  targets,
  targetTable,
} from './report.js';
import {
  freePort,
  node24,
  NodeRuntime,
  peakRssMiB,
  pinTo,
  postmasterPid,
  root,
  RunningService,
  ServerProcess,
  serviceEnv,
  startServer,
  startService,
} from './server-process.js';

const quick = process.argv.includes('--quick');
const withFloor = process.argv.includes('--floor');
const withLean = process.argv.includes('--lean');
const baseline = await baselineOption(process.argv);
const withTraced = process.argv.includes('--traced');
const withReplica = process.argv.includes('--replica');
const pinned = pinOption(process.argv);
const settings = {
  mode: quick ? 'quick' : 'full',
  rounds: roundsOption(process.argv),
  seconds: quick ? 2 : 5,
  warmupSeconds: quick ? 1 : 2,
  connections: 50,
  seededAnimals: 100_000,
  scaleRows: [10_000, 1_000_000],
  scaleRequests: quick ? 200 : 500,
  startupSamples: 3,
};

/**
 * The service with request log lines, rate limits and load shedding off: what those features cost, measured in
 * the same rounds. Metrics, security headers, the deprecation interceptor and the guard stay on (no setting
 * turns them off).
 */
const LEAN_ENV = {
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_MINUTE: '0',
  LOAD_SHEDDING_MAX_IN_FLIGHT: '0',
  LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: '0',
};

/** Tracing on, every request sampled, exporting over OTLP/HTTP (protobuf) to `startTraceSink`. */
const TRACED_ENV = { OTEL_TRACES_SAMPLER: 'always_on' };

/** The yardsticks, in the order they take their turns after the service. */
const yardsticks: YardstickName[] = [
  'feature-equal',
  'straightforward',
  'ceiling',
  ...(withFloor ? ['floor' as const] : []),
];

/**
 * Start-up of a service that brings its own embedded PostgreSQL in a fresh
 * DATA_DIR (initdb, start, migrations); the cluster is stopped and removed after.
 */
async function coldStart(
  node: NodeRuntime,
  command: string,
  args: string[],
  logDir: string,
  label: string,
): Promise<number> {
  const key = `bench-${randomBytes(16).toString('hex')}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'animal-store-bench-cold-'));
  await chmod(dataDir, 0o755);
  const port = await freePort();
  try {
    const server = await startServer({
      command,
      args,
      cwd: root,
      // A fresh database: the instance applies the migrations itself (production leaves that to a migrate step).
      env: {
        ...serviceEnv(port, key),
        // `npm start` runs the `node` first on PATH.
        PATH: `${dirname(node.path)}${delimiter}${process.env.PATH}`,
        DATA_DIR: dataDir,
        EMBEDDED_POSTGRES_PORT: String(await freePort()),
        MIGRATIONS_RUN: 'true',
      },
      logFile: join(logDir, `${label}.log`),
      readyUrl: `http://127.0.0.1:${port}/v1/pets?limit=1`,
      headers: { authorization: `Bearer ${key}` },
      timeoutMs: 240_000,
    });
    await server.stop();
    return server.startupMs;
  } finally {
    await stopOrphanedPostgres(join(dataDir, 'postgres'));
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The cluster a stopped service started should stop with it; make sure, by its postmaster.pid. */
async function stopOrphanedPostgres(clusterDir: string): Promise<void> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  const deadline = Date.now() + 15_000;
  while (existsSync(pidFile) && Date.now() < deadline) {
    const pid = postmasterPid(clusterDir);
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      return; // not running
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function main(): Promise<number> {
  const logDir = await mkdtemp(join(tmpdir(), 'animal-store-bench-logs-'));
  const node = await node24();
  console.log(`Benchmark (${settings.mode}); servers on Node ${node.version}; server logs in ${logDir}`);
  if (baseline) console.log(`baseline: ${baseline.dir} at ${baseline.revision}`);
  // Before PostgreSQL starts, so that it and every backend it forks inherit the load generator's CPUs.
  if (pinned) pinTo(process.pid, pinned.others);
  const database = await startBenchDatabase({ replica: withReplica });
  const key = await issueDatabaseKey(node, database.url);
  // Each server's key; the yardsticks hold the service's in their in-memory sets.
  const keys: Partial<Record<ServerName, string>> = {};
  const keyOf = (name: ServerName) => keys[name] ?? key;
  const running: ServerProcess[] = [];
  try {
    // Start-up against a running PostgreSQL, and the list query's latency as the table grows.
    await database.reseed(settings.scaleRows[0]);
    const startups: number[] = [];
    for (let i = 0; i < settings.startupSamples - 1; i++) {
      const probe = await startBenchService(node, database.url, key, logDir);
      startups.push(probe.startupMs);
      await probe.stop();
    }
    const scaling = await startBenchService(node, database.url, key, logDir, { label: 'scale' });
    running.push(scaling);
    startups.push(scaling.startupMs);
    const startupWarmMs = median(startups);
    console.log(
      `start-up of node dist/src/main.js, PostgreSQL running: ${startupWarmMs.toFixed(0)} ms (median of ${startups.length})`,
    );

    const scaleUrl = `${scaling.origin}/v1/pets?limit=100&status=available`;
    const scale: { rows: number; medianMs: number }[] = [];
    let seeded = settings.scaleRows[0];
    for (const rows of settings.scaleRows) {
      await database.grow(rows - seeded);
      seeded = rows;
      scale.push({ rows, medianMs: await sequentialLatency(scaleUrl, key, settings.scaleRequests) });
      console.log(`list latency (status filter, limit 100) at ${rows} rows: ${scale.at(-1)!.medianMs.toFixed(2)} ms`);
    }
    const scaleRatio = scale[1].medianMs / scale[0].medianMs;

    // A B C A B C: the servers take turns on each route, every round; each round starts one server later. Every
    // server starts after the reseed, the service too: one that served the growing table before would carry that
    // run's state (its connections' cached plans, its heap) into the rounds, which no other server does.
    running.splice(running.indexOf(scaling), 1);
    await scaling.stop();
    await database.reseed(settings.seededAnimals);
    const service = await startBenchService(node, database.url, key, logDir);
    running.push(service);
    const servers: Partial<Record<ServerName, RunningService>> = { service };
    if (baseline) {
      keys.baseline = await issueDatabaseKey(node, database.url, baseline.dir);
      servers.baseline = await startBenchService(node, database.url, keys.baseline, logDir, {
        checkout: baseline.dir,
        label: 'baseline',
      });
      running.push(servers.baseline);
    }
    for (const name of yardsticks) {
      servers[name] = await startYardstick(node, name, database.url, key, logDir);
      running.push(servers[name]);
    }
    if (withLean) {
      servers.lean = await startService({
        node: node.path,
        databaseUrl: database.url,
        apiKey: key,
        env: { API_KEYS: '', ...LEAN_ENV },
        logFile: join(logDir, 'lean.log'),
      });
      running.push(servers.lean);
    }
    if (withTraced) {
      const sink = await startTraceSink();
      servers.traced = await startService({
        node: node.path,
        databaseUrl: database.url,
        apiKey: key,
        env: { API_KEYS: '', ...TRACED_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint },
        logFile: join(logDir, 'traced.log'),
      });
      running.push({ ...servers.traced, stop: () => servers.traced!.stop().then(sink.stop) });
    }
    if (database.replicaUrl) {
      servers.replicated = await startBenchService(node, database.url, key, logDir, {
        label: 'replicated',
        env: { DATABASE_REPLICA_URL: database.replicaUrl },
      });
      running.push(servers.replicated);
    }
    const names = Object.keys(servers) as ServerName[];
    if (pinned) for (const name of names) pinTo(servers[name]!.pid, pinned.servers);
    const routes = benchRoutes(settings.seededAnimals);
    await checkAnswers(
      Object.fromEntries(names.map((name) => [name, { ...servers[name]!, key: keyOf(name) }])),
      routes,
    );
    console.log(`every server answers the benchmarked requests as the service does: ${names.join(', ')}`);
    // How busy the machine was around the rounds (the 1-minute load average): on a shared machine, other work
    // slows every server, and only the ratios of one run compare.
    const load1 = [loadavg()[0]];
    const runs = new Map<string, LoadResult[]>();
    let failures = 0;
    for (let round = 1; round <= settings.rounds; round++) {
      const order = names.map((_, i) => names[(i + round - 1) % names.length]);
      for (const route of routes) {
        for (const name of order) {
          const { origin, pid } = servers[name]!;
          const options = { connections: settings.connections, key: keyOf(name), postmasters: database.postmasters };
          const warmup = await load(origin, pid, route, { ...options, seconds: settings.warmupSeconds });
          const run = await load(origin, pid, route, { ...options, seconds: settings.seconds });
          if (route.method !== 'GET') await database.settle();
          failures += warmup.errors + warmup.non2xx + run.errors + run.non2xx;
          runs.set(`${route.name}|${name}`, [...(runs.get(`${route.name}|${name}`) ?? []), run]);
          const databases = Object.entries(run.databaseCpuMicrosPerRequest).map(
            ([db, cpu]) => `, ${db} ${cpu.toFixed(0)}`,
          );
          console.log(
            `round ${round} ${route.name.padEnd(32)} ${name.padEnd(15)} ${run.reqPerSec.toFixed(0).padStart(6)} req/s` +
              ` p99 ${run.p99Ms} ms, µs CPU/req: server ${run.cpuMicrosPerRequest.toFixed(0)}${databases.join('')},` +
              ` ${run.errors} errors, ${run.non2xx} non-2xx`,
          );
        }
      }
    }
    load1.push(loadavg()[0]);
    const rss = new Map(names.map((name) => [name, peakRssMiB(servers[name]!.pid)]));
    for (const server of running.splice(0)) await server.stop();

    const summaries: RouteSummary[] = routes.flatMap((route) =>
      names.map((name) => summarise(route.name, name, runs.get(`${route.name}|${name}`)!, rss.get(name)!)),
    );
    const headline = ratios(summaries, 'service', 'feature-equal');
    const againstStraightforward = ratios(summaries, 'service', 'straightforward');
    const againstBaseline = baseline ? ratios(summaries, 'service', 'baseline') : undefined;
    const againstFloor = withFloor ? ratios(summaries, 'service', 'floor') : undefined;
    const againstCeiling = names
      .filter((name) => name !== 'ceiling')
      .map((name) => ({ name, rows: ratios(summaries, name, 'ceiling') }));

    // Cold: a fresh DATA_DIR, so the embedded PostgreSQL is created, started and migrated.
    const coldNodeMs = await coldStart(node, node.path, [join(root, 'dist', 'dev', 'start.js')], logDir, 'cold-node');
    // `npm start` builds again first: only the full run pays for that.
    const coldNpmStartMs = quick ? null : await coldStart(node, 'npm', ['start'], logDir, 'cold-npm-start');

    console.log(
      `\n${settings.rounds} rounds of ${settings.seconds} s per route and server (after ${settings.warmupSeconds} s warm-up), ${settings.connections} connections, ${settings.seededAnimals} animals, ${cpus().length} CPUs${pinned ? ` (servers on CPU ${pinned.servers}, PostgreSQL and the load generator on ${pinned.others})` : ''}, servers on Node ${node.version} (load generator on ${process.version}), load average ${load1.map((l) => l.toFixed(1)).join(' then ')}\n`,
    );
    const targetRows = targets(
      routes,
      {
        featureEqual: headline,
        straightforward: againstStraightforward,
        ceiling: againstCeiling.find(({ name }) => name === 'service')!.rows,
        floor: againstFloor,
      },
      {
        peakRssMiB: rss.get('service')!,
        baselinePeakRssMiB: rss.get('baseline'),
        straightforwardPeakRssMiB: rss.get('straightforward')!,
        listScaleRatio: scaleRatio,
        startupWarmMs,
      },
    );
    console.log(
      `The service against the same features written the usual way:\n\n${ratioTable('service', 'feature-equal', headline)}\n`,
    );
    console.log(
      `The service against the straightforward app:\n\n${ratioTable('service', 'straightforward', againstStraightforward)}\n`,
    );
    if (baseline) {
      console.log(
        `The service against the baseline (${baseline.dir} at ${baseline.revision}):\n\n${ratioTable('service', 'baseline', againstBaseline!)}\n\n${rssRatio('service', 'baseline', rss)}\n`,
      );
    }
    if (againstFloor) {
      console.log(`The whole request against the floor:\n\n${ratioTable('service', 'floor', againstFloor)}\n`);
    }
    console.log(`${targetTable(targetRows)}\n`);
    if (servers.lean) {
      const features = ratios(summaries, 'service', 'lean');
      console.log(`What the features LEAN_ENV turns off cost:\n\n${ratioTable('service', 'lean', features)}\n`);
    }
    if (servers.traced) {
      const tracing = ratios(summaries, 'traced', 'service');
      console.log(`What tracing every request costs:\n\n${ratioTable('traced', 'service', tracing)}\n`);
    }
    if (servers.replicated) {
      const replicated = ratios(summaries, 'replicated', 'service');
      console.log(`Reading from the replica:\n\n${ratioTable('replicated', 'service', replicated)}\n`);
    }
    console.log(`peak RSS: ${names.map((name) => `${name} ${rss.get(name)!.toFixed(0)} MiB`).join(', ')}\n`);
    console.log(`Every server:\n\n${resultsTable(summaries)}`);
    for (const { name, rows } of againstCeiling) console.log(`\n${ratioTable(name, 'ceiling', rows)}`);
    console.log(
      `\nlist latency, status filter, limit 100: ${scale.map((s) => `${s.medianMs.toFixed(2)} ms at ${s.rows} rows`).join(', ')}; ratio ${scaleRatio.toFixed(2)}`,
    );
    console.log(
      `start-up to first successful request: node dist/src/main.js with PostgreSQL running ${startupWarmMs.toFixed(0)} ms;`,
    );
    console.log(
      `  node dist/dev/start.js with a cold embedded PostgreSQL ${coldNodeMs.toFixed(0)} ms; npm start (build included) with a cold embedded PostgreSQL ${coldNpmStartMs === null ? 'not measured with --quick' : `${coldNpmStartMs.toFixed(0)} ms`}`,
    );

    const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));
    await mkdir(resultsDir, { recursive: true });
    const file = join(resultsDir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    const machine = { cpus: cpus().length, pinned, node: node.version, loadGeneratorNode: process.version, load1 };
    const startup = { warmMs: startupWarmMs, samples: startups, coldNodeMs, coldNpmStartMs };
    const results = {
      settings: { ...settings, servers: names, baseline },
      machine,
      summaries,
      ratios: { againstFeatureEqual: headline, againstStraightforward, againstCeiling, againstBaseline },
      targets: targetRows,
      peakRssMiB: Object.fromEntries(rss),
      scale: { rows: scale, ratio: scaleRatio },
      startup,
    };
    await writeFile(file, JSON.stringify(results, null, 2));
    console.log(`\nwritten to ${file}`);
    if (failures > 0) {
      console.error(`${failures} requests failed (errors or non-2xx answers); server logs in ${logDir}`);
      return 1;
    }
    await rm(logDir, { recursive: true, force: true });
    return 0;
  } finally {
    for (const server of running) await server.stop();
    await database.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

/** `--rounds <n>`: more rounds when one build's rounds differ by more than the builds compared (3 by default). */
function roundsOption(argv: readonly string[]): number {
  const at = argv.indexOf('--rounds');
  if (at === -1) return 3;
  const rounds = Number(argv[at + 1]);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds needs a whole number of rounds, 1 or more');
  return rounds;
}

/**
 * `--pin`: the servers on the last CPU, PostgreSQL and the load generator on the others, so that a server's CPU per
 * request is not its preemption by the database it waits on (docs/performance.md, "Profiling").
 */
function pinOption(argv: readonly string[]): { servers: string; others: string } | undefined {
  if (!argv.includes('--pin')) return undefined;
  const last = cpus().length - 1;
  if (last < 1)
    throw new Error('--pin needs 2 CPUs or more: one for the servers, the rest for PostgreSQL and the load');
  return { servers: String(last), others: last === 1 ? '0' : `0-${last - 1}` };
}
