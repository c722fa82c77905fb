/**
 * Does a page deep in the table cost what the first page costs?
 *
 * Seeds 1,000,000 animals into a real PostgreSQL, runs the built service
 * (`node dist/src/main.js`, production settings) against it, and measures the
 * median latency of the first page and of a page near the end of the table,
 * interleaved in one run, for `GET /v1/pets` with and without a status filter.
 * Prints the deep / first ratio and the EXPLAIN plans of the deep queries.
 *
 *   npm run bench:paging
 *
 * BENCH_DATABASE_URL: a throw-away database to use (its `pets` table is
 * emptied); unset, an embedded PostgreSQL in a temporary directory.
 * BENCH_PAGING_ROWS (default 1000000), BENCH_PAGING_SAMPLES (default 2000 per
 * page), BENCH_TIMEOUT_SECONDS (default 300): the whole run is bounded by it.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import pg from 'pg';
import { startBenchDatabase } from './bench-database.js';
import { built, startService } from './server-process.js';

type Status = 'available' | 'pending' | 'sold';
interface CursorCodec {
  encode(cursor: { after: number; status?: Status }): string;
}

const ROWS = positiveInteger('BENCH_PAGING_ROWS', 1_000_000);
const SAMPLES = positiveInteger('BENCH_PAGING_SAMPLES', 2_000);
const TIMEOUT_SECONDS = positiveInteger('BENCH_TIMEOUT_SECONDS', 300);
const WARM_UP = 200;
const LIMIT = 20;
const TARGET_RATIO = 1.5;
const API_KEY = `bench_${randomBytes(18).toString('base64url')}`;
const CURSOR_SECRET = randomBytes(32).toString('base64url');

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[1-9][0-9]*$/.test(raw)) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return Number(raw);
}

/** Things to undo at the end, newest first, whatever happened. */
const cleanups: (() => Promise<unknown>)[] = [];

async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup().catch((error: unknown) => console.error(`clean-up failed: ${String(error)}`));
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

interface Answer {
  status: number;
  link: string | undefined;
  body: string;
}

function get(origin: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${path}`, { agent, headers: { authorization: `Bearer ${API_KEY}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const link = res.headers.link;
        resolve({
          status: res.statusCode!,
          link: Array.isArray(link) ? link.join(', ') : link,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The id a page starts after so that at least `LIMIT` more animals (of `status`) follow it. */
async function deepAfter(sql: pg.Client, status?: Status): Promise<number> {
  const { rows } = status
    ? await sql.query<{ id: string }>('SELECT id FROM pets WHERE status = $1 ORDER BY id DESC OFFSET $2 LIMIT 1', [
        status,
        2 * LIMIT,
      ])
    : await sql.query<{ id: string }>('SELECT id FROM pets ORDER BY id DESC OFFSET $1 LIMIT 1', [2 * LIMIT]);
  return Number(rows[0].id);
}

const median = (values: number[]) => quantile(values, 0.5);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function timed(origin: string, path: string): Promise<number> {
  const started = process.hrtime.bigint();
  const answer = await get(origin, path);
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (answer.status !== 200 || !answer.link || (JSON.parse(answer.body) as unknown[]).length !== LIMIT) {
    throw new Error(
      `GET ${path} answered ${answer.status} with ${answer.body.length} bytes, Link ${answer.link ?? 'absent'}`,
    );
  }
  return elapsed;
}

interface Comparison {
  label: string;
  first: number[];
  deep: number[];
}

/** Alternates first and deep requests (swapping which goes first) so drift affects both alike. */
async function compare(origin: string, label: string, firstPath: string, deepPath: string): Promise<Comparison> {
  const result: Comparison = { label, first: [], deep: [] };
  for (let i = 0; i < WARM_UP + SAMPLES; i += 1) {
    const [a, b] = i % 2 === 0 ? [firstPath, deepPath] : [deepPath, firstPath];
    const ta = await timed(origin, a);
    const tb = await timed(origin, b);
    if (i < WARM_UP) continue;
    result.first.push(a === firstPath ? ta : tb);
    result.deep.push(a === firstPath ? tb : ta);
  }
  return result;
}

async function explain(sql: pg.Client, text: string, params: unknown[]): Promise<string> {
  const { rows } = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params);
  return rows.map((row) => `    ${row['QUERY PLAN']}`).join('\n');
}

async function main(): Promise<void> {
  const { PageCursorCodec } = (await import(built('pets/page-cursor.codec.js'))) as {
    PageCursorCodec: new (secret: string) => CursorCodec;
  };
  const { pageStatement } = (await import(built('pets/pets.repository.js'))) as {
    pageStatement: (query: { status?: Status; limit: number; after: number }) => [{ text: string }, unknown[]];
  };
  const cursors = new PageCursorCodec(CURSOR_SECRET);

  const database = await startBenchDatabase();
  cleanups.push(() => database.stop());
  const { sql } = database;
  const service = await startService({
    databaseUrl: database.url,
    apiKey: API_KEY,
    env: { CURSOR_SECRET, LOG_LEVEL: 'warn' },
  });
  cleanups.push(() => service.stop());
  const { origin } = service;

  let started = performance.now();
  await database.reseed(ROWS, 'aged');
  console.log(
    `Seeded ${ROWS.toLocaleString('en')} animals and analysed the table in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
  );

  const cases: { label: string; status?: Status }[] = [
    { label: 'no filter' },
    { label: 'status=available', status: 'available' },
  ];
  const comparisons: Comparison[] = [];
  const plans: string[] = [];
  for (const { label, status } of cases) {
    const after = await deepAfter(sql, status);
    const filter = status ? `&status=${status}` : '';
    const firstPath = `/v1/pets?limit=${LIMIT}${filter}`;
    const deepPath = `${firstPath}&cursor=${cursors.encode(status ? { after, status } : { after })}`;
    started = performance.now();
    comparisons.push(await compare(origin, `${label}, after id ${after.toLocaleString('en')}`, firstPath, deepPath));
    console.log(
      `Measured ${label} (${SAMPLES} samples each) in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
    );
    // The page query exactly as the service's repository builds it.
    const [{ text }, parameters] = pageStatement({ status, limit: LIMIT, after });
    plans.push(`  ${label}, deep page:\n` + (await explain(sql, text, parameters)));
  }
  const offset = await sql.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE) SELECT id, name, category_id, status FROM pets ORDER BY id OFFSET $1 LIMIT $2`,
    [ROWS - 2 * LIMIT, LIMIT + 1],
  );
  const offsetTime = offset.rows.map((row) => row['QUERY PLAN']).find((line) => line.startsWith('Execution Time'));

  console.log(`\nGET /v1/pets?limit=${LIMIT}, ${ROWS.toLocaleString('en')} animals, median latency (p90) in ms:`);
  let worst = 0;
  for (const { label, first, deep } of comparisons) {
    const ratio = median(deep) / median(first);
    worst = Math.max(worst, ratio);
    console.log(
      `  ${label.padEnd(36)} first ${median(first).toFixed(3)} (${quantile(first, 0.9).toFixed(3)})` +
        `  deep ${median(deep).toFixed(3)} (${quantile(deep, 0.9).toFixed(3)})  deep/first ratio ${ratio.toFixed(2)}`,
    );
  }
  console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of the deep pages:\n${plans.join('\n')}`);
  console.log(
    `\nFor comparison, the same deep page read with OFFSET ${(ROWS - 2 * LIMIT).toLocaleString('en')}: ${offsetTime}`,
  );
  const verdict = worst <= TARGET_RATIO ? 'within' : 'ABOVE';
  console.log(`\nWorst deep/first ratio ${worst.toFixed(2)}: ${verdict} the ${TARGET_RATIO}x target.`);
  if (worst > TARGET_RATIO) process.exitCode = 1;
}

const timeout = setTimeout(() => {
  console.error(`The paging benchmark did not finish within ${TIMEOUT_SECONDS} s; stopping.`);
  void cleanUp().finally(() => process.exit(2));
}, TIMEOUT_SECONDS * 1000);

main()
  .catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 2;
  })
  .finally(async () => {
    agent.destroy();
    await cleanUp();
    clearTimeout(timeout);
  });
