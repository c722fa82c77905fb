/**
 * Does the service cost at scale what it costs small? Each dimension is seeded small, then large, into a
 * PostgreSQL this bench runs itself; the built service is started against each and measured; the large / small
 * ratios are printed in one table (docs/performance.md, "At scale").
 *
 *   npm run bench:scale
 *
 * The large sizes, smaller for a smoke run:
 * BENCH_SCALE_KEYS (default 1000000; small: 10), BENCH_SCALE_IDEMPOTENCY_ROWS (2000000; small: 0),
 * BENCH_SCALE_CALLERS (100000 keys that call getPet; small: 10), BENCH_SCALE_ANIMALS (10000000; small: 10000),
 * BENCH_SCALE_SAMPLES (300 requests per latency). BENCH_SCALE_DATABASE_URL: a throw-away database to use instead
 * (its tables are emptied); unset, an embedded PostgreSQL in a temporary directory.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Agent, request as httpRequest } from 'node:http';
import { DataSource, type DataSourceOptions, type EntityManager } from 'typeorm';
import { startBenchDatabase, type BenchDatabase } from './bench-database.js';
import { median } from './load.js';
import { built, startService, type RunningService } from './server-process.js';

const KEYS = positiveInteger('BENCH_SCALE_KEYS', 1_000_000);
const IDEMPOTENCY_ROWS = positiveInteger('BENCH_SCALE_IDEMPOTENCY_ROWS', 2_000_000);
const CALLERS = positiveInteger('BENCH_SCALE_CALLERS', 100_000);
const ANIMALS = positiveInteger('BENCH_SCALE_ANIMALS', 10_000_000);
const SAMPLES = positiveInteger('BENCH_SCALE_SAMPLES', 300);
const TARGET_RATIO = 1.2;
const ENV_KEY = `bench_${randomBytes(18).toString('base64url')}`;
const METRICS_TOKEN = randomBytes(24).toString('base64url');
const AUTH_FAILURE_BUDGET = 5;

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[1-9][0-9]*$/.test(raw)) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return Number(raw);
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** An issued-format key (`pet_` and 32 base62 characters): wrong ones must reach the lookup, not the format check. */
const issuedKey = () => `pet_${[...randomBytes(32)].map((byte) => ALPHABET[byte % 62]).join('')}`;
const digest = (key: string) => createHash('sha256').update(key).digest('hex');

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

interface Answer {
  status: number;
  body: string;
}

function call(origin: string, path: string, key: string, init: { method?: string; body?: string } = {}) {
  return new Promise<Answer & { ms: number }>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (init.body) Object.assign(headers, { 'content-type': 'application/json', 'idempotency-key': randomUUID() });
    const req = httpRequest(`${origin}${path}`, { agent, method: init.method ?? 'GET', headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, body, ms: Number(process.hrtime.bigint() - started) / 1e6 }),
      );
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

const randomUUID = () => randomBytes(16).toString('hex');

/** Median latency in ms of SAMPLES sequential requests, each answered `status`. */
async function latency(
  origin: string,
  status: number,
  next: () => { path: string; key: string; method?: string; body?: string },
): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES + 20; i += 1) {
    const { path, key, ...init } = next();
    const answer = await call(origin, path, key, init);
    if (answer.status !== status) throw new Error(`${path} answered ${answer.status}, not ${status}: ${answer.body}`);
    if (i >= 20) times.push(answer.ms);
  }
  return median(times);
}

/** Current resident set size of a process, in MiB. */
function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

async function withService<T>(
  db: BenchDatabase,
  env: Record<string, string>,
  work: (service: RunningService) => Promise<T>,
): Promise<T> {
  const service = await startService({
    databaseUrl: db.url,
    apiKey: ENV_KEY,
    env: { LOG_LEVEL: 'warn', METRICS_TOKEN, ...env },
  });
  try {
    return await work(service);
  } finally {
    await service.stop();
  }
}

type Row = { dimension: string; measure: string; small: number; large: number; unit: string };
const rows: Row[] = [];
const record = (dimension: string, measure: string, unit: string, small: number, large: number) =>
  rows.push({ dimension, measure, small, large, unit });

/** Replaces the issued keys with `count` of them; returns one that is valid. */
async function seedKeys(db: BenchDatabase, count: number, name = 'bench'): Promise<string[]> {
  await db.sql.query('TRUNCATE api_keys RESTART IDENTITY CASCADE');
  const keys = Array.from({ length: count }, issuedKey);
  for (let from = 0; from < keys.length; from += 50_000) {
    const slice = keys.slice(from, from + 50_000);
    await db.sql.query(
      `INSERT INTO api_keys (name, prefix, digest) SELECT $1, left(k, 12), d FROM unnest($2::text[], $3::text[]) AS x(k, d)`,
      [name, slice, slice.map(digest)],
    );
  }
  await db.sql.query('VACUUM ANALYZE api_keys');
  return keys;
}

async function keysDimension(db: BenchDatabase) {
  const measured = [];
  for (const count of [10, KEYS]) {
    const [valid] = await seedKeys(db, count);
    measured.push(
      await withService(db, { AUTH_FAILURE_LIMIT_PER_MINUTE: String(AUTH_FAILURE_BUDGET) }, async (service) => {
        const get = await latency(service.origin, 200, () => ({ path: '/v1/pets?limit=20', key: valid }));
        const rss = rssMiB(service.pid);
        for (let i = 0; i <= AUTH_FAILURE_BUDGET; i += 1) await call(service.origin, '/v1/pets', issuedKey());
        const wrong = await latency(service.origin, 429, () => ({ path: '/v1/pets', key: issuedKey() }));
        return { startup: service.startupMs, rss, get, wrong, wrongRss: rssMiB(service.pid) };
      }),
    );
  }
  const [small, large] = measured;
  const dimension = `keys 10 → ${KEYS.toLocaleString('en')}`;
  record(dimension, 'start-up', 'ms', small.startup, large.startup);
  record(dimension, 'RSS', 'MiB', small.rss, large.rss);
  record(dimension, 'authenticated GET, median', 'ms', small.get, large.get);
  record(dimension, 'wrong key past the budget, median', 'ms', small.wrong, large.wrong);
  record(dimension, 'RSS past the budget', 'MiB', small.wrongRss, large.wrongRss);
}

async function idempotencyDimension(db: BenchDatabase) {
  const [valid] = await seedKeys(db, 1);
  const { IdempotencyKeysRepository } = (await import(built('pets/idempotency/idempotency-keys.repository.js'))) as {
    IdempotencyKeysRepository: new () => { deleteExpired(manager: EntityManager, rows: number): Promise<number> };
  };
  const { PURGE_BATCH_ROWS } = (await import(built('pets/idempotency/idempotency-purge.service.js'))) as {
    PURGE_BATCH_ROWS: number;
  };
  const { dataSourceOptions } = (await import(built('database/data-source-options.js'))) as {
    dataSourceOptions: (url: string) => DataSourceOptions;
  };
  const measured = [];
  for (const count of [0, IDEMPOTENCY_ROWS]) {
    await db.sql.query('TRUNCATE idempotency_keys');
    await db.sql.query(
      `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_fingerprint, response_status, response_body, created_at)
       SELECT '1', 'k' || n, 'x', 201, '{"id":1,"name":"Bench"}', now() - interval '25 hours' - n * interval '1 ms'
         FROM generate_series(1, $1::int) n`,
      [count],
    );
    await db.sql.query('VACUUM ANALYZE idempotency_keys');
    const create = await withService(db, {}, (service) =>
      latency(service.origin, 201, () => ({
        path: '/v1/pets',
        key: valid,
        method: 'POST',
        body: JSON.stringify({ name: 'Bench', categoryId: 7 }),
      })),
    );
    // The service's purge, as it runs (its batches, under the role's statement timeout), timed from here.
    const dataSource = await new DataSource(dataSourceOptions(db.url)).initialize();
    const purge = await dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL statement_timeout = 5000`);
      const repository = new IdempotencyKeysRepository();
      const started = performance.now();
      let batch: number;
      do batch = await repository.deleteExpired(manager, PURGE_BATCH_ROWS);
      while (batch === PURGE_BATCH_ROWS);
      return performance.now() - started;
    });
    await dataSource.destroy();
    const { rows: left } = await db.sql.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM idempotency_keys WHERE created_at < now() - interval '24 hours'`,
    );
    measured.push({ create, purge, left: left[0].count });
  }
  const [small, large] = measured;
  const dimension = `idempotency rows 0 → ${IDEMPOTENCY_ROWS.toLocaleString('en')}`;
  record(dimension, 'create, median', 'ms', small.create, large.create);
  record(dimension, 'one purge (absolute)', 'ms', small.purge, large.purge);
  record(dimension, 'expired rows left after it', 'rows', small.left, large.left);
}

async function callersDimension(db: BenchDatabase) {
  await db.reseed(10);
  const measured = [];
  for (const count of [10, CALLERS]) {
    const keys = await seedKeys(db, count, 'caller');
    // Both sides make CALLERS calls, spread over 10 keys or over CALLERS keys, so that only the number of keys
    // differs, not the traffic; per-key limits off, or 10 keys would mostly be answered 429.
    measured.push(
      await withService(db, { RATE_LIMIT_PER_MINUTE: '0' }, async (service) => {
        for (let from = 0; from < CALLERS; from += 16) {
          const batch = Array.from({ length: Math.min(16, CALLERS - from) }, (_, i) => keys[(from + i) % count]);
          const answers = await Promise.all(batch.map((key) => call(service.origin, '/v1/pets/1', key)));
          const refused = answers.find((answer) => answer.status !== 200);
          if (refused) throw new Error(`getPet answered ${refused.status}, not 200: ${refused.body}`);
        }
        const scrape = await latency(service.origin, 200, () => ({ path: '/metrics', key: METRICS_TOKEN }));
        const size = Buffer.byteLength((await call(service.origin, '/metrics', METRICS_TOKEN)).body);
        return { size, scrape, rss: rssMiB(service.pid) };
      }),
    );
  }
  const [small, large] = measured;
  const dimension = `keys that called getPet 10 → ${CALLERS.toLocaleString('en')}`;
  record(dimension, '/metrics size', 'bytes', small.size, large.size);
  record(dimension, 'scrape, median', 'ms', small.scrape, large.scrape);
  record(dimension, 'RSS', 'MiB', small.rss, large.rss);
}

async function animalsDimension(db: BenchDatabase) {
  const [valid] = await seedKeys(db, 1);
  const { PageCursorCodec } = (await import(built('pets/page-cursor.codec.js'))) as {
    PageCursorCodec: new (secret: string) => { encode(cursor: { after: number }): string };
  };
  const secret = randomBytes(32).toString('base64url');
  const cursors = new PageCursorCodec(secret);
  const measured = [];
  for (const count of [10_000, ANIMALS]) {
    await db.reseed(count);
    measured.push(
      await withService(db, { CURSOR_SECRET: secret }, async (service) => {
        const deep = `/v1/pets?limit=20&cursor=${cursors.encode({ after: count - 100 })}`;
        const random = () => 1 + Math.floor(Math.random() * count);
        return {
          list: await latency(service.origin, 200, () => ({ path: '/v1/pets?limit=20', key: valid })),
          deep: await latency(service.origin, 200, () => ({ path: deep, key: valid })),
          get: await latency(service.origin, 200, () => ({ path: `/v1/pets/${random()}`, key: valid })),
          create: await latency(service.origin, 201, () => ({
            path: '/v1/pets',
            key: valid,
            method: 'POST',
            body: JSON.stringify({ name: 'Bench', categoryId: 7 }),
          })),
        };
      }),
    );
  }
  const [small, large] = measured;
  const dimension = `animals 10,000 → ${ANIMALS.toLocaleString('en')}`;
  record(dimension, 'list, median', 'ms', small.list, large.list);
  record(dimension, 'deep page, median', 'ms', small.deep, large.deep);
  record(dimension, 'get by random id, median', 'ms', small.get, large.get);
  record(dimension, 'create, median', 'ms', small.create, large.create);
}

function print() {
  const figure = (value: number) => (Number.isInteger(value) ? value.toLocaleString('en') : value.toFixed(2));
  console.log(`\n| Dimension | Measure | Small | Large | Large / small |`);
  console.log(`| --- | --- | ---: | ---: | ---: |`);
  for (const row of rows) {
    const ratio = row.small > 0 ? row.large / row.small : NaN;
    const verdict = row.unit === 'rows' || row.measure.includes('absolute') ? '' : ratio <= TARGET_RATIO ? '' : ' ⚠';
    console.log(
      `| ${row.dimension} | ${row.measure} | ${figure(row.small)} ${row.unit} | ${figure(row.large)} ${row.unit} | ${
        Number.isNaN(ratio) ? '–' : ratio.toFixed(2)
      }${verdict} |`,
    );
  }
  console.log(
    `\nLoad average (1, 5, 15 min) at the end: ${loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}`,
  );
  console.log(`Target: each ratio ≤ ${TARGET_RATIO} (⚠ marks those above it); the purge must leave 0 rows.`);
}

async function main() {
  console.log(
    `Load average (1, 5, 15 min) at the start: ${loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}`,
  );
  const db = await startBenchDatabase({ urlVariable: 'BENCH_SCALE_DATABASE_URL' });
  try {
    await keysDimension(db);
    await idempotencyDimension(db);
    await callersDimension(db);
    await animalsDimension(db);
  } finally {
    agent.destroy();
    await db.stop();
  }
  print();
}

main().catch((error: unknown) => {
  console.error(`bench:scale failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
