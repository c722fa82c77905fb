import { expect } from '@jest/globals';
import autocannon from 'autocannon';
import { connect, Socket } from 'node:net';
import { ProductionService, startProductionService } from './support/production-service.js';
import type { ServiceProcess } from './support/service-process.js';

const KEY = 'keyless-traffic-test-key-0123456789';
const SLOW_UPLOADS = 1_000;
const FLOOD_CONNECTIONS = 300;
const FLOOD_SECONDS = 5;
const KEYED_CLIENTS = 4;
/** A request that has not answered by then has failed: far above what any answer here should take. */
const ANSWER_BOUND_MS = 10_000;

/** One request; its status and how long it took, in ms. */
async function timed(origin: string, path: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const response = await fetch(`${origin}${path}`, { headers, signal: AbortSignal.timeout(ANSWER_BOUND_MS) });
  await response.arrayBuffer();
  return { status: response.status, ms: Math.round(performance.now() - started) };
}

/** A keyless create that sends its headers and one byte of its 100-byte body, then nothing. */
function openSlowUpload(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        'POST /v1/pets HTTP/1.1\r\nHost: service\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
        (error) => (error ? reject(error) : resolve(socket)),
      );
    });
    socket.on('error', reject);
  });
}

/** Clients without a key must not take the built service, in production mode, away from those with one. */
describe('keyless traffic does not starve probes or keyed requests', () => {
  let production: ProductionService;
  let service: ServiceProcess;
  const keyed = { authorization: `Bearer ${KEY}` };

  beforeAll(async () => {
    production = await startProductionService({
      CURSOR_SECRET: 'keyless-traffic-test-cursor-secret-0123456789',
      API_KEYS: KEY,
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN_DELAY_MS: '0',
      // As in test/support/test-app.ts: the loop's delay measures the test machine. The in-flight bound, what
      // keyless traffic used to exhaust, stays at its default.
      LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: '0',
    });
    ({ service } = production);
  }, 300_000);
  afterAll(() => production?.close());

  it(`with ${SLOW_UPLOADS} keyless slow uploads open, the probes and a keyed list answer 200`, async () => {
    const port = Number(new URL(service.origin).port);
    const sockets: Socket[] = [];
    try {
      // In batches, so that the listen backlog never overflows.
      for (let opened = 0; opened < SLOW_UPLOADS; opened += 100) {
        sockets.push(...(await Promise.all(Array.from({ length: 100 }, () => openSlowUpload(port)))));
      }
      // Every upload has been read up to its body by now: the service answers requests in the order they came.
      const live = await timed(service.origin, '/health/live');
      const ready = await timed(service.origin, '/health/ready');
      const list = await timed(service.origin, '/v1/pets', keyed);
      console.log(
        `with ${sockets.length} slow uploads open: /health/live ${live.status} in ${live.ms} ms, ` +
          `/health/ready ${ready.status} in ${ready.ms} ms, keyed GET /v1/pets ${list.status} in ${list.ms} ms`,
      );
      expect([live.status, ready.status, list.status]).toEqual([200, 200, 200]);
      expect(sockets.filter((socket) => socket.destroyed)).toHaveLength(0);
    } finally {
      sockets.forEach((socket) => socket.destroy());
    }
  }, 120_000);

  it(`during a keyless flood of /health/ready at ${FLOOD_CONNECTIONS} connections no keyed request gets 503`, async () => {
    const flood = autocannon({
      url: `${service.origin}/health/ready`,
      connections: FLOOD_CONNECTIONS,
      duration: FLOOD_SECONDS,
    });
    const statuses: number[] = [];
    const times: number[] = [];
    const deadline = Date.now() + FLOOD_SECONDS * 1_000 - 500;
    // A few keyed clients, each one list at a time, until the flood ends.
    const keyedClient = async () => {
      while (Date.now() < deadline && statuses.length < 500) {
        const { status, ms } = await timed(service.origin, '/v1/pets', keyed);
        statuses.push(status);
        times.push(ms);
      }
    };
    await Promise.all(Array.from({ length: KEYED_CLIENTS }, keyedClient));
    times.sort((a, b) => a - b);
    const result = await flood;
    console.log(
      `/health/ready flood at ${FLOOD_CONNECTIONS} connections: ${result.requests.total} probes ` +
        `(${result.non2xx} not 2xx, ${result.errors} errors); ${KEYED_CLIENTS} keyed clients' ${statuses.length} requests meanwhile, ` +
        `median ${times[times.length >> 1]} ms, slowest ${times[times.length - 1]} ms`,
    );
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(result.non2xx).toBe(0);
  }, 60_000);
});
