/**
 * `npm run bench:profile [-- --routes get,list20] [-- --seconds 10] [-- --checkout <dir>] [-- --server floor]`: a
 * `--cpu-prof` profile of the built service (or of another built checkout, or of bench/nest-floor.ts with
 * `--server floor`) under `npm run bench`'s load, one route at a time, each in a fresh process started as the bench
 * starts it; then where the busy time of the measured seconds went, as shares and as µs per request
 * (bench/cpu-profile.ts). The profiles and the tables are left in bench/results/ (git-ignored). See
 * docs/performance.md, "Profiling".
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchDatabase } from './bench-database.js';
import { issueDatabaseKey, startBenchService, startYardstick } from './bench-service.js';
import { CpuProfile, profileTables, ProfileWindow, summariseProfile } from './cpu-profile.js';
import { benchRoutes, load } from './load.js';
import { node24, root } from './server-process.js';

const SEEDED_ANIMALS = 100_000;
const CONNECTIONS = 50;
const WARMUP_SECONDS = 3;

/** Short names for the bench's routes. */
const ROUTES: Record<string, string> = {
  list20: 'list limit=20',
  list100: 'list limit=100&status=available',
  get: 'get by id',
  create: 'create',
};

function option(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? undefined : process.argv[at + 1];
}

/** The monotonic clock of `--cpu-prof`'s timestamps, in µs. */
const now = () => Number(process.hrtime.bigint() / 1000n);

async function main(): Promise<void> {
  const checkout = option('checkout') ?? root;
  const seconds = Number(option('seconds') ?? 10);
  // Several, in turn on each route, to compare them back to back under the same machine load.
  const servers = (option('server') ?? 'service').split(',');
  const unknownServers = servers.filter((server) => server !== 'service' && server !== 'floor');
  if (unknownServers.length > 0) throw new Error(`unknown server ${unknownServers.join(', ')}: service or floor`);
  const wanted = (option('routes') ?? 'get,list20').split(',');
  const unknown = wanted.filter((name) => !(name in ROUTES));
  if (unknown.length > 0)
    throw new Error(`unknown route ${unknown.join(', ')}: one of ${Object.keys(ROUTES).join(', ')}`);

  const node = await node24();
  const out = join(
    fileURLToPath(new URL('../results/', import.meta.url)),
    `profile-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  );
  await mkdir(out, { recursive: true });
  const logDir = await mkdtemp(join(tmpdir(), 'animal-store-profile-logs-'));
  const database = await startBenchDatabase();
  try {
    await database.reseed(SEEDED_ANIMALS);
    const key = await issueDatabaseKey(node, database.url, checkout);
    const routes = benchRoutes(SEEDED_ANIMALS);
    const report: string[] = [
      `${servers.join(' and ')} (service: checkout ${checkout}; floor: bench/nest-floor.ts), Node ${node.version}, ${seconds} s per route after ${WARMUP_SECONDS} s warm-up, ${CONNECTIONS} connections`,
    ];
    for (const [server, routeName] of wanted.flatMap((r) => servers.map((server) => [server, r] as const))) {
      const name = `${server}-${routeName}`;
      const route = routes.find((r) => r.name === ROUTES[routeName])!;
      const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${out}`, `--cpu-prof-name=${name}.cpuprofile`];
      const service =
        server === 'floor'
          ? await startYardstick(node, 'floor', database.url, key, logDir, { nodeArgs })
          : await startBenchService(node, database.url, key, logDir, {
              checkout,
              label: name,
              nodeArgs,
              // Profiled, the process writes its profile when it exits: no need to wait out the drain delay first.
              env: { SHUTDOWN_DRAIN_DELAY_MS: '0' },
            });
      try {
        await load(service.origin, service.pid, route, { connections: CONNECTIONS, seconds: WARMUP_SECONDS, key });
        const load1 = loadavg()[0];
        const from = now();
        const run = await load(service.origin, service.pid, route, { connections: CONNECTIONS, seconds, key });
        const to = now();
        await service.stop();
        const profile = JSON.parse(await readFile(join(out, `${name}.cpuprofile`), 'utf8')) as CpuProfile;
        if (profile.startTime > from || profile.endTime < to)
          throw new Error(`${name}: the profile does not cover the measured seconds`);
        const window: ProfileWindow = { from, to, requests: run.requests };
        const summary = summariseProfile(profile, window);
        // The measured seconds on the profile's clock and the requests served, to summarise the profile again later.
        await writeFile(join(out, `${name}.window.json`), JSON.stringify(window));
        const heading = `## ${server}, ${route.name}: ${run.reqPerSec.toFixed(0)} req/s, ${run.cpuMicrosPerRequest.toFixed(0)} µs CPU/req, ${run.errors + run.non2xx} failed, load average ${load1.toFixed(1)}`;
        report.push(`${heading}\n\n${profileTables(summary, 25, run.requests)}`);
        console.log(`${heading}\n\n${profileTables(summary, 15, run.requests)}\n`);
      } finally {
        await service.stop();
      }
    }
    await writeFile(join(out, 'summary.md'), `${report.join('\n\n')}\n`);
    console.log(`profiles and summary.md in ${out}`);
    await rm(logDir, { recursive: true, force: true });
  } finally {
    await database.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
