import { expect } from '@jest/globals';
import { Client } from 'pg';
import { ShutdownState } from '../src/edge/shutdown-state.js';
import { preflight, SHOP } from './support/preflight.js';
import { exchange, rawRequest } from './support/raw-http.js';
import { pollUntil } from './support/poll.js';
import { auth, request, TEST_KEY } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

const fromShop = (headers: Record<string, string> = {}) => ({ ...headers, origin: SHOP });

const malformed = (key?: string): RequestInit => ({
  method: 'POST',
  headers: fromShop({ 'content-type': 'application/json', ...(key === undefined ? {} : auth(key)) }),
  body: '{"name": ',
});

const error = (status: number, code: string) => ({ status, code, message: expect.any(String) });

/** What the first steps give every answer, whichever step gives the answer. */
function expectEdgeHeaders(headers: Headers): void {
  expect(headers.get('x-request-id')).toMatch(/\S/);
  expect(headers.get('cache-control')).toBe('no-store');
  expect(headers.get('vary')).toContain('Origin');
}

const rawGet = (origin: string, path: string, headers: [string, string][] = []) =>
  exchange(origin, rawRequest('GET', path, [['Host', 'localhost'], ['Origin', SHOP], ...headers]));
const bearer: [string, string] = ['Authorization', `Bearer ${TEST_KEY}`];
const repeatedAuthorization = (origin: string) => rawGet(origin, '/v1/pets', [bearer, bearer]);

// This database only: other specs' apps, on the same server, wait on locks of their own.
const WAITING_ON_THE_LOCK = `SELECT 1 FROM pg_stat_activity
  WHERE datname = current_database() AND application_name = 'animal-store' AND wait_event_type = 'Lock'`;

describe('the order of the request pipeline', () => {
  const t = testAppPerBlock({
    corsOrigins: [SHOP],
    loadShedding: { maxInFlight: 1, maxEventLoopDelayMs: 0, maxEventLoopUtilization: 0 },
  });

  /** Runs `whileOverloaded` while a list of pets waits on a lock of the pets table, which another session holds. */
  async function withBudgetTaken(whileOverloaded: () => Promise<void>): Promise<void> {
    const holder = new Client({ connectionString: t.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
      const inFlight = request(t.origin, '/v1/pets', { headers: auth() });
      await pollUntil(async () => (await t.sql.query(WAITING_ON_THE_LOCK)).rowCount === 1, {
        timeoutMs: 3_000,
        intervalMs: 20,
        what: 'the list of pets to wait on the lock',
      });
      await whileOverloaded();
      await holder.query('ROLLBACK');
      expect((await inFlight).status).toBe(200);
    } finally {
      await holder.end();
    }
  }

  it('refuses a repeated header or a malformed URL before anything else, and parses the body before the guard runs', async () => {
    for (const refused of [
      await repeatedAuthorization(t.origin),
      await rawGet(t.origin, '/v1/pets/%E0%A4%A', [bearer]),
    ]) {
      expect(refused?.status).toBe(400);
      expect(refused?.body).toEqual(error(400, 'validation_failed'));
      expectEdgeHeaders(refused!.headers);
    }

    // A keyless request's 401 comes after CORS: cors.e2e-spec.ts reads its headers.
    const keylessMalformed = await request(t.origin, '/v1/pets', malformed());
    expect(keylessMalformed.status).toBe(400);
    expect(keylessMalformed.body).toEqual(error(400, 'invalid_json'));
    expect(keylessMalformed.headers.get('access-control-allow-origin')).toBe(SHOP);
  });

  it('while the in-flight budget is taken: header check, CORS and body parsing answer first, then shedding (never the probes), before the guard; then serves again', async () => {
    await withBudgetTaken(async () => {
      expect((await repeatedAuthorization(t.origin))?.status).toBe(400);

      const answer = await preflight(t.origin);
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe(SHOP);
      expectEdgeHeaders(answer.headers);

      const malformedBody = await request(t.origin, '/v1/pets', malformed(TEST_KEY));
      expect(malformedBody.status).toBe(400);
      expect(malformedBody.body).toEqual(error(400, 'invalid_json'));

      // An OPTIONS that is no preflight reaches the route CORS adds, which is shed like any other.
      const notPreflight = await fetch(`${t.origin}/v1/pets`, { method: 'OPTIONS', headers: fromShop() });
      expect(notPreflight.status).toBe(503);
      expect(await notPreflight.json()).toEqual(error(503, 'service_unavailable'));

      for (const headers of [fromShop(auth()), fromShop()]) {
        const shed = await request(t.origin, '/v1/pets', { headers });
        expect(shed.status).toBe(503);
        expect(shed.body).toEqual(error(503, 'service_unavailable'));
        expect(shed.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(shed.headers.get('content-type')).toMatch(/^application\/json/);
        expect(shed.headers.get('access-control-allow-origin')).toBe(SHOP);
        expectEdgeHeaders(shed.headers);
      }
      // Never the probes.
      for (const path of ['/health/live', '/health/ready']) expect((await request(t.origin, path)).status).toBe(200);
    });
    expect((await request(t.origin, '/v1/pets', { headers: auth() })).status).toBe(200);
    const metrics = (await request(t.origin, '/metrics')).text;
    expect(metrics).toMatch(/^http_request_duration_seconds_count\{method="GET",route="\/v1\/pets",status="503"\} 2$/m);
    expect(metrics).toMatch(/^http_request_duration_seconds_count\{method="OPTIONS",route="\*",status="204"\} 1$/m);
  });

  it('while draining, every step answers as before, and each answer from draining on closes its connection', async () => {
    t.app.get(ShutdownState).begin();
    // The header check and CORS answer before draining marks the connection.
    const answers = [
      (await repeatedAuthorization(t.origin))!,
      await preflight(t.origin),
      await request(t.origin, '/v1/pets', { headers: fromShop(auth()) }),
      await request(t.origin, '/v1/pets', { headers: fromShop() }),
      await request(t.origin, '/v1/pets', malformed(TEST_KEY)),
    ];
    expect(answers.map(({ status, headers }) => [status, headers.get('connection')])).toEqual([
      [400, 'keep-alive'],
      [204, 'keep-alive'],
      [200, 'close'],
      [401, 'close'],
      [400, 'close'],
    ]);
    expect(answers[1].headers.get('access-control-allow-origin')).toBe(SHOP);

    await withBudgetTaken(async () => {
      const shed = await request(t.origin, '/v1/pets', { headers: fromShop(auth()) });
      expect(shed.status).toBe(503);
      expect(shed.headers.get('connection')).toBe('close');
      expect(shed.headers.get('access-control-allow-origin')).toBe(SHOP);
    });
  });
});
