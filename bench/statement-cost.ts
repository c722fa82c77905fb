/**
 * `npm run bench:statements [-- --calls <n>]`: PostgreSQL's own work for each statement the read routes run, the
 * service's (its built `PetsRepository`) beside the yardsticks' (`YARDSTICK_SQL`), with no HTTP server in between:
 * one connection on the bench's embedded PostgreSQL with 100,000 animals sends each statement `--calls` times in a
 * row, as node-postgres sends it for TypeORM (unnamed, parsed and planned on every call), in 3 rounds, and the
 * backend's CPU time (/proc) and the shared buffers it hit (pg_stat_database) are divided by the calls. At full load
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
const { PetsRepository } = (await import(built('pets/pets.repository.js'))) as {
  PetsRepository: new (database: unknown) => { boundPageQuery(query: PageQuery): [string, unknown[]] };
};
const service = new PetsRepository(undefined);

/** Each statement: the route it serves, whose, and how it is bound. */
const STATEMENTS: [route: string, whose: string, sql: string, parameters: unknown[]][] = [
  ['list limit=20', 'yardsticks', YARDSTICK_SQL.list, [20]],
  ['list limit=20', 'service, first page', ...service.boundPageQuery({ limit: 20, after: 0 })],
  ['list limit=20', 'service, second page', ...service.boundPageQuery({ limit: 20, after: 20 })],
  ['list limit=100&status=available', 'yardsticks', YARDSTICK_SQL.listByStatus, ['available', 100]],
  [
    'list limit=100&status=available',
    'service, first page',
    ...service.boundPageQuery({ status: 'available', limit: 100, after: 0 }),
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
  const cpu = STATEMENTS.map((): number[] => []);
  const blocks = STATEMENTS.map(() => NaN);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [i, [, , sql, parameters]] of STATEMENTS.entries()) {
      for (let call = 0; call < WARMUP_CALLS; call++) await client.query(sql, parameters);
      const [cpuBefore, blocksBefore] = [cpuMicros(backend), await blocksHit()];
      for (let call = 0; call < calls; call++) await client.query(sql, parameters);
      cpu[i].push((cpuMicros(backend) - cpuBefore) / calls);
      blocks[i] = ((await blocksHit()) - blocksBefore) / calls;
    }
  }
  console.log(
    `${ROUNDS} rounds of ${calls} calls per statement, one connection, ${SEEDED_ANIMALS} animals\n\n` +
      '| route | whose | backend CPU µs per call, median (lowest–highest) | shared buffers hit per call |\n' +
      '| --- | --- | --- | --- |\n' +
      STATEMENTS.map(([route, whose], i) => {
        const range = `${Math.min(...cpu[i]).toFixed(1)}–${Math.max(...cpu[i]).toFixed(1)}`;
        return `| ${route} | ${whose} | ${median(cpu[i]).toFixed(1)} (${range}) | ${blocks[i].toFixed(2)} |`;
      }).join('\n'),
  );
} finally {
  await client.end();
  await database.stop();
}
