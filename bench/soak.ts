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
import type { IncomingHttpHeaders } from 'node:http';
import { startBenchDatabase } from './bench-database.js';
import { parseSoakOptions } from './soak-options.js';
import type { ProbeSample } from './soak-probe.js';
import { startProbedService } from './soak-service.js';

const HEAP_BASELINE_AFTER_S = 10;
// Once the load stops, what is still held after this pause is retained, not a backlog being worked off.
const HEAP_SETTLE_AFTER_LOAD_S = 5;
const SEED_PETS = 100;

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;

async function main(): Promise<void> {
  const options = parseSoakOptions(process.argv.slice(2));
  const database = await startBenchDatabase({ urlVariable: 'DATABASE_URL' });
  const apiKey = randomBytes(24).toString('hex');
  const auth = { authorization: `Bearer ${apiKey}` };
  const service = await startProbedService(database.url, apiKey).catch(async (error: unknown) => {
    await database.stop();
    throw error;
  });
  const { origin } = service;

  try {
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
    await new Promise((resolve) => setTimeout(resolve, HEAP_SETTLE_AFTER_LOAD_S * 1000));
    const settled = await service.sample({ gc: true });

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
      [
        'after the load',
        `${HEAP_SETTLE_AFTER_LOAD_S} s later: heap used (after GC) ${mib(settled.heapUsedBytes)}, RSS ${mib(settled.rssBytes)}`,
      ],
    ];
    for (const [label, value] of lines) console.log(`  ${label.padEnd(22)} ${value}`);
  } finally {
    await service.stop();
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
