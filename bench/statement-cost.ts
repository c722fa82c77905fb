/**
 * `npm run bench:statements [-- --calls <n>]`: PostgreSQL's own work for each statement the read routes run, the
 * service's (its built `PetsRepository`) beside the yardsticks' (`YARDSTICK_SQL`), with no HTTP server in between:
 * one connection on the bench's embedded PostgreSQL with 100,000 animals sends each statement `--calls` times in a
 * row, as node-postgres sends it for TypeORM (unnamed, parsed and planned on every call) and as a named prepared
 * statement (parsed once per connection, its plan cached by PostgreSQL), in 3 rounds, and the backend's CPU time
 * (/proc) and the shared buffers it hit (pg_stat_database) are divided by the calls. At full load
 * a request's PostgreSQL CPU also depends on how busy the server process keeps the 2 cores; this shows the part
 * that is the statement's. See docs/performance.md, "The database's work per request".
 */
import pg from 'pg';
import { startBenchDatabase } from './bench-database.js';
import { median } from './load.js';
import { built, cpuMicros } from './server-process.js';
import { YARDSTICK_SQL } from './yardstick-pets.js';

const SEEDED_ANIMALS = 100_000;
const ROUNDS = 3;
const WARMUP_CALLS = 500;
const at = process.argv.indexOf('--calls');
const calls = at === -1 ? 20_000 : Number(process.argv[at + 1]);
if (!Number.isInteger(calls) || calls < 1) throw new Error('--calls needs a whole number of calls, 1 or more');
if (process.env.BENCH_DATABASE_URL) {
  throw new Error("A backend's CPU time is read from /proc: unset BENCH_DATABASE_URL to use the embedded PostgreSQL");
}

type PageQuery = { status?: string; limit: number; after: number };
const { pageStatement } = (await import(built('pets/pets.repository.js'))) as {
  pageStatement: (query: PageQuery) => [{ text: string }, unknown[]];
};
/** The page's SQL and parameters exactly as the service's repository sends them. */
const servicePage = (query: PageQuery): [string, unknown[]] => {
  const [{ text }, parameters] = pageStatement(query);
  return [text, parameters];
};

/** Each statement: the route it serves, whose, and how it is bound. */
const STATEMENTS: [route: string, whose: string, sql: string, parameters: unknown[]][] = [
  ['list limit=20', 'yardsticks', YARDSTICK_SQL.list, [20]],
  ['list limit=20', 'service, first page', ...servicePage({ limit: 20, after: 0 })],
  ['list limit=20', 'service, second page', ...servicePage({ limit: 20, after: 20 })],
  ['list limit=100&status=available', 'yardsticks', YARDSTICK_SQL.listByStatus, ['available', 100]],
  [
    'list limit=100&status=available',
    'service, first page',
    ...servicePage({ status: 'available', limit: 100, after: 0 }),
  ],
  ['get by id', 'yardsticks and service', YARDSTICK_SQL.byId, [SEEDED_ANIMALS / 2]],
];

const database = await startBenchDatabase();
const client = new pg.Client({ connectionString: database.url });
try {
  await database.reseed(SEEDED_ANIMALS);
  await client.connect();
  const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const blocksHit = async () => {
    await client.query('SELECT pg_stat_force_next_flush()');
    const { rows } = await client.query<{ hit: string }>(
      'SELECT blks_hit AS hit FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0].hit);
  };
  /** Each statement as it is sent: unnamed, or named (prepared on its first call on this connection). */
  const SENT = ['unnamed', 'named'] as const;
  const runs = STATEMENTS.flatMap(([route, whose, text, values], i) =>
    SENT.map((sent) => ({ route, whose, sent, query: { text, values, name: sent === 'named' ? `s${i}` : undefined } })),
  );
  const cpu = runs.map((): number[] => []);
  const blocks = runs.map(() => NaN);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [i, { query }] of runs.entries()) {
      for (let call = 0; call < WARMUP_CALLS; call++) await client.query(query);
      const [cpuBefore, blocksBefore] = [cpuMicros(backend), await blocksHit()];
      for (let call = 0; call < calls; call++) await client.query(query);
      cpu[i].push((cpuMicros(backend) - cpuBefore) / calls);
      blocks[i] = ((await blocksHit()) - blocksBefore) / calls;
    }
  }
  console.log(
    `${ROUNDS} rounds of ${calls} calls per statement, one connection, ${SEEDED_ANIMALS} animals\n\n` +
      '| route | whose | sent | backend CPU µs per call, median (lowest–highest) | shared buffers hit per call |\n' +
      '| --- | --- | --- | --- | --- |\n' +
      runs
        .map(({ route, whose, sent }, i) => {
          const range = `${Math.min(...cpu[i]).toFixed(1)}–${Math.max(...cpu[i]).toFixed(1)}`;
          return `| ${route} | ${whose} | ${sent} | ${median(cpu[i]).toFixed(1)} (${range}) | ${blocks[i].toFixed(2)} |`;
        })
        .join('\n'),
  );
} finally {
  await client.end();
  await database.stop();
}
