import { expect } from '@jest/globals';
import { connect, Socket } from 'node:net';
import { pollUntil } from './support/poll.js';
import { exchange, rawRequest } from './support/raw-http.js';
import { ProductionService, startProductionService } from './support/production-service.js';
import { ServiceExit, ServiceProcess } from './support/service-process.js';

const KEY = 'production-test-key-0123456789';
const CURSOR_SECRET = 'production-test-cursor-secret-0123456789';
const KEY_SHAPED = `pet_${'Ab3'.repeat(10)}xy`; // like an issued key: pet_ + 32 base62
const GRACE_MS = 10_000;
const METRICS_TOKEN = 'production-test-metrics-token-0123456789';

const bearer = (key = KEY) => ({ authorization: `Bearer ${key}` });
const createPet = (name: string, extra: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { ...bearer(), 'content-type': 'application/json', ...extra },
  body: JSON.stringify({ name, categoryId: 1 }),
});
const start = (env: Record<string, string>) =>
  startProductionService({ API_KEYS: KEY, CURSOR_SECRET, LOG_LEVEL: 'info', ...env });

type LogLine = Record<string, unknown>;

/** A create whose body never arrives: accepted once the server answered `100 Continue`, in flight while open. */
async function startStuckRequest(origin: string): Promise<Socket> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  socket.write(
    'POST /v1/pets HTTP/1.1\r\nHost: service\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${KEY}\r\nContent-Length: 64\r\nExpect: 100-continue\r\n\r\n`,
  );
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  await pollUntil(() => received.startsWith('HTTP/1.1 100 Continue'), { what: '100 Continue' });
  socket.write('{"name":');
  return socket;
}

/** The service as it ships, on a real database, its stdout the log under test; the last test stops it mid-burst. */
describe('the production build', () => {
  let running: ProductionService;
  let service: ServiceProcess;
  const parsed = () => service.lines.map((line) => JSON.parse(line) as LogLine);
  const completed = (reqId: string) =>
    pollUntil(() => parsed().find((line) => line.reqId === reqId && line.msg === 'request completed'), {
      what: `the log line of request ${reqId}`,
    });

  beforeAll(async () => {
    running = await start({ SHUTDOWN_GRACE_MS: String(GRACE_MS), METRICS_TOKEN });
    ({ service } = running);
  }, 300_000);
  afterAll(async () => {
    service?.kill('SIGKILL');
    await running?.close();
  });

  it('logs 100 clients hanging up mid-body at info with their request ids: no ERROR line, no stack, no 5xx', async () => {
    const ABORTS = 100;
    const ids = Array.from({ length: ABORTS }, (_, n) => `abort-${n}`);
    const headers = Object.entries({ ...bearer(), 'Content-Type': 'application/json', 'Content-Length': '100' });
    for (const id of ids) {
      await exchange(service.origin, (socket) => {
        socket.write(rawRequest('POST', '/v1/pets', [...headers, ['Host', 'a'], ['X-Request-Id', id]]) + '{"name":');
        setTimeout(() => socket.destroy(), 20);
      });
    }

    // Whatever the service makes of them, each leaves a line with its request id.
    const about = (line: LogLine) => ids.includes(String(line.reqId));
    await pollUntil(
      () =>
        new Set(
          parsed()
            .filter(about)
            .map((line) => line.reqId),
        ).size === ABORTS,
      {
        what: `a log line for each of the ${ABORTS} aborted requests`,
      },
    );
    expect(parsed().filter((line) => Number(line.level) >= 50)).toEqual([]);
    const abandoned = parsed().filter((line) => about(line) && String(line.msg).startsWith('request abandoned'));
    expect(abandoned.map((line) => line.reqId).sort()).toEqual([...ids].sort());
    for (const line of abandoned) {
      expect(line).toMatchObject({
        level: 30,
        method: 'POST',
        route: '/v1/pets',
        status: 499,
        msg: 'request abandoned: the client closed the connection before sending the whole body',
      });
      expect(line).not.toHaveProperty('err');
    }
    const metrics = await fetch(`${service.origin}/metrics`, { headers: bearer(METRICS_TOKEN) });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).not.toMatch(/^http_request_duration_seconds_count\{[^}]*status="5\d\d"\} /m);
  });

  it('writes one JSON line per request with method, route, status, duration, request id and key id, and never a key, a bearer credential or a header', async () => {
    const created = await fetch(`${service.origin}/v1/pets`, createPet('Logged', { 'x-request-id': 'log-check-1' }));
    expect(created.status).toBe(201);
    // A key-shaped credential, sent where a request id goes too.
    const denied = await fetch(`${service.origin}/v1/pets`, {
      headers: { ...bearer(KEY_SHAPED), 'x-request-id': KEY_SHAPED },
    });
    expect([denied.status, denied.headers.get('x-request-id')]).toEqual([401, KEY_SHAPED]);

    const line = await completed('log-check-1');
    expect(line).toMatchObject({ level: 30, method: 'POST', route: '/v1/pets', status: 201, keyId: 'env-1' });
    expect(line.durationMs).toEqual(expect.any(Number));
    const deniedLine = await completed('[redacted]');
    expect(deniedLine).toMatchObject({ method: 'GET', route: '/v1/pets', status: 401, keyId: null });
    const unnamed = await fetch(`${service.origin}/v1/pets`, { headers: bearer('not-a-valid-key-000000') });
    expect(await completed(unnamed.headers.get('x-request-id')!)).toMatchObject({ status: 401, keyId: null });
    // Every line is JSON (parsed() throws otherwise), one per request.
    const lines = parsed().filter((entry) => entry.reqId === 'log-check-1' && entry.msg === 'request completed');
    expect(lines).toHaveLength(1);
    const log = service.lines.join('\n');
    expect(log).not.toContain(KEY);
    expect(log).not.toContain(KEY_SHAPED);
    expect(log).not.toMatch(/"authorization"|"headers"/i);
  });

  it('logs server errors with their request id and no SQL leaks into the response', async () => {
    await running.sql.query('ALTER TABLE pets RENAME TO pets_elsewhere');
    let failed: Response;
    try {
      failed = await fetch(`${service.origin}/v1/pets`, createPet('Lost', { 'x-request-id': 'error-check-1' }));
    } finally {
      await running.sql.query('ALTER TABLE pets_elsewhere RENAME TO pets');
    }
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ code: 'internal_error', message: 'Internal server error.', status: 500 });
    const errorLine = await pollUntil(
      () => parsed().find((line) => line.context === 'ApiErrorFilter' && line.reqId === 'error-check-1'),
      { what: 'the error log line' },
    );
    expect(errorLine).toMatchObject({ level: 50, reqId: 'error-check-1', method: 'POST', route: '/v1/pets' });
    expect(errorLine).not.toHaveProperty('requestId');
    expect(await completed('error-check-1')).toMatchObject({ status: 500 });
  });

  it('on SIGTERM mid-burst, finishes what it accepted, loses no 201 and exits 0 within the grace period', async () => {
    const TOTAL = 400;
    const CONCURRENCY = 16;
    const outcomes = new Map<string, number | string>();
    let next = 0;
    let inFlight = 0;
    let inFlightAtSignal = -1;
    let signalledAt = 0;
    let exit: (ServiceExit & { afterMs: number }) | undefined;
    const exited = service.exited.then((value) => (exit = { ...value, afterMs: Date.now() - signalledAt }));
    const deadline = Date.now() + 60_000;

    const worker = async () => {
      while (next < TOTAL && Date.now() < deadline) {
        const name = `burst-${next++}`;
        inFlight += 1;
        try {
          const response = await fetch(`${service.origin}/v1/pets`, createPet(name));
          await response.arrayBuffer();
          outcomes.set(name, response.status);
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause;
          outcomes.set(name, cause?.code ?? String(error));
        } finally {
          inFlight -= 1;
        }
        if (signalledAt === 0 && outcomes.size >= TOTAL / 4) {
          inFlightAtSignal = inFlight;
          signalledAt = Date.now();
          service.kill('SIGTERM');
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, GRACE_MS + 5_000).unref())]);

    const created = [...outcomes].filter(([, outcome]) => outcome === 201).map(([name]) => name);
    const { rows } = await running.sql.query<{ name: string }>("SELECT name FROM pets WHERE name LIKE 'burst-%'");

    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit!.afterMs).toBeLessThan(GRACE_MS);
    expect(inFlightAtSignal).toBeGreaterThan(0);
    expect(created.length).toBeGreaterThanOrEqual(TOTAL / 4);
    // Every answer was a 201; the rest failed at the connection level only (refused once the listener closed, or
    // reset in its backlog or on a keep-alive connection closed as idle), before the service read them.
    const others = [...outcomes.values()].filter((outcome) => outcome !== 201);
    for (const other of others) expect(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET']).toContain(other);
    // Every 201 is stored and nothing else: no request was cut off after the service had accepted it.
    expect(rows.map((row) => row.name).sort()).toEqual(created.sort());
    expect(parsed().some((line) => typeof line.msg === 'string' && line.msg.startsWith('Stopped in'))).toBe(true);
  }, 90_000);
});

describe('the production build, stopping with a request that never finishes', () => {
  let running: ProductionService | undefined;
  let socket: Socket | undefined;
  afterEach(async () => {
    socket?.destroy();
    running?.service.kill('SIGKILL');
    await running?.close();
    [socket, running] = [undefined, undefined];
  });

  // Without the drain delay the exit's timing measures the grace period alone.
  it('exits 1 once the grace period is over', async () => {
    running = await start({ SHUTDOWN_GRACE_MS: '1500', SHUTDOWN_DRAIN_DELAY_MS: '0' });
    const { service } = running;
    socket = await startStuckRequest(service.origin);
    const signalledAt = Date.now();
    service.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(1_500);
    expect(service.lines.some((line) => line.includes('Shutdown still incomplete after 1500 ms'))).toBe(true);
  }, 60_000);

  it('without METRICS_TOKEN serves no /metrics, saying once at start how to; exits at once on a second signal', async () => {
    running = await start({ SHUTDOWN_GRACE_MS: '120000' });
    const { service } = running;
    const metrics = await fetch(`${service.origin}/metrics`);
    expect(metrics.status).toBe(404);
    expect(await metrics.json()).toEqual(await (await fetch(`${service.origin}/no-such-thing`)).json());
    // Ready is answered over HTTP; the start's lines may still be on their way through stdout.
    await pollUntil(() => service.lines.some((line) => line.includes('/metrics is not served')), {
      what: 'the warning about /metrics',
    });
    const warnings = service.lines.filter((line) => line.includes('/metrics is not served'));
    expect(warnings.map((line) => JSON.parse(line) as LogLine)).toEqual([
      expect.objectContaining({
        level: 40,
        context: 'Metrics',
        msg: expect.stringMatching(/^\/metrics is not served.*set METRICS_TOKEN/),
      }),
    ]);
    socket = await startStuckRequest(service.origin);
    service.kill('SIGTERM');
    await pollUntil(() => service.lines.some((line) => line.includes('SIGTERM received')), {
      what: 'the shutdown to begin',
    });
    service.kill('SIGTERM');
    const exit = await Promise.race([service.exited, new Promise((resolve) => setTimeout(resolve, 20_000).unref())]);
    expect(exit).toEqual({ code: 128 + 15, signal: null });
  }, 60_000);
});
