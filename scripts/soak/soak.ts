/**
 * Soak and overload run (by hand, not in the test suite): the built service on
 * a real PostgreSQL, driven by autocannon with a mix of list, create and get.
 *
 *   npm run soak                               # 60 s at 64 connections
 *   npm run soak -- --duration 60 --connections 512
 *
 * With DATABASE_URL set it uses that database, else a throw-away embedded PostgreSQL.
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres.js';
import { parseSoakOptions } from './soak-options.js';
import { startServiceProcess } from './service-process.js';
import type { ProbeSample } from './service-probe.js';

const HEAP_BASELINE_AFTER_S = 10;
const READY_WITHIN_MS = 60_000;
const SEED_PETS = 100;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilServing(origin: string, headers: Record<string, string>): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  while (Date.now() < deadline) {
    const status = await fetch(`${origin}/v1/pets?limit=1`, { headers, signal: AbortSignal.timeout(2_000) })
      .then((response) => response.status)
      .catch(() => 0);
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the service did not serve within ${READY_WITHIN_MS / 1000} s`);
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;

async function main(): Promise<void> {
  const options = parseSoakOptions(process.argv.slice(2));
  const dataDir = await mkdtemp(join(tmpdir(), 'animal-store-soak-'));
  // The embedded cluster may run as a separate `postgres` user, which must reach the directory.
  await chmod(dataDir, 0o755);
  const database = process.env.DATABASE_URL
    ? { url: process.env.DATABASE_URL, stop: async () => undefined }
    : await startEmbeddedPostgres({ dataDir, port: await freePort() });

  const apiKey = randomBytes(24).toString('hex');
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${apiKey}` };
  const service = startServiceProcess({
    ...process.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: database.url,
    API_KEYS: apiKey,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    // Rate limiting would turn the soak into a 429 count; the run measures the service behind it.
    RATE_LIMIT_PER_MINUTE: '0',
  });

  try {
    await waitUntilServing(origin, auth);
    let seededId = 1;
    for (let i = 0; i < SEED_PETS; i++) {
      const response = await fetch(`${origin}/v1/pets`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Seed ${i}`, categoryId: 1 + (i % 5) }),
      });
      seededId = ((await response.json()) as { id: number }).id;
    }

    const shed = { count: 0, withRetryAfter: 0 };
    const onResponse = (status: number, _body: string, _context: object, headers?: IncomingHttpHeaders) => {
      if (status !== 503) return;
      shed.count++;
      if (Object.keys(headers ?? {}).some((name) => name.toLowerCase() === 'retry-after')) shed.withRetryAfter++;
    };
    const start = await service.sample({ gc: true, resetDelay: true });
    console.log(
      `Soak: ${options.durationSeconds} s, ${options.connections} connections, list/create/get (1:1:1), ` +
        `service pid ${service.pid} on ${origin}, ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'}`,
    );

    let atBaseline: ProbeSample | undefined;
    const baselineTimer =
      options.durationSeconds > HEAP_BASELINE_AFTER_S
        ? setTimeout(() => {
            void service.sample({ gc: true }).then((sample) => (atBaseline = sample));
          }, HEAP_BASELINE_AFTER_S * 1000)
        : undefined;

    const result = await autocannon({
      url: origin,
      connections: options.connections,
      duration: options.durationSeconds,
      timeout: 10,
      requests: [
        { method: 'GET', path: '/v1/pets?limit=20', headers: auth, onResponse },
        {
          method: 'POST',
          path: '/v1/pets',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Soak', categoryId: 3, status: 'pending' }),
          onResponse: (status, body, context, headers) => {
            onResponse(status, body, context, headers);
            if (status === 201) (context as { petId?: number }).petId = (JSON.parse(body) as { id: number }).id;
          },
        },
        {
          method: 'GET',
          headers: auth,
          setupRequest: (request, context) => ({
            ...request,
            path: `/v1/pets/${(context as { petId?: number }).petId ?? seededId}`,
          }),
          onResponse,
        },
      ],
    });
    clearTimeout(baselineTimer);
    const end = await service.sample({ gc: true });

    const byStatus = Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => !status.startsWith('2'))
      .map(([status, stats]) => `${status}: ${stats.count}`);
    const heapGrowth = atBaseline
      ? `${(((end.heapUsedBytes - atBaseline.heapUsedBytes) / atBaseline.heapUsedBytes) * 100).toFixed(1)} % from ${HEAP_BASELINE_AFTER_S} s to the end`
      : `n/a (run shorter than ${HEAP_BASELINE_AFTER_S} s)`;
    const lines: [string, string][] = [
      ['requests', `${result.requests.total} (${Math.round(result.requests.average)}/s average)`],
      ['2xx', String(result['2xx'])],
      ['non-2xx by status', byStatus.length ? byStatus.join(', ') : 'none'],
      ['503 with Retry-After', `${shed.withRetryAfter} of ${shed.count}`],
      ['socket errors', `${result.errors} (of which timeouts ${result.timeouts})`],
      ['latency', `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`],
      [
        'event-loop delay',
        `p50 ${ms(end.eventLoopDelayP50Ms)}, p99 ${ms(end.eventLoopDelayP99Ms)}, max ${ms(end.eventLoopDelayMaxMs)}`,
      ],
      ['RSS', `start ${mib(start.rssBytes)}, end ${mib(end.rssBytes)}`],
      [
        'heap used (after GC)',
        `start ${mib(start.heapUsedBytes)}, at ${HEAP_BASELINE_AFTER_S} s ${atBaseline ? mib(atBaseline.heapUsedBytes) : 'n/a'}, end ${mib(end.heapUsedBytes)}`,
      ],
      ['heap growth', heapGrowth],
    ];
    for (const [label, value] of lines) console.log(`  ${label.padEnd(22)} ${value}`);
  } finally {
    await service.stop();
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
