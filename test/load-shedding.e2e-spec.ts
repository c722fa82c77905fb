import { expect } from '@jest/globals';
import { Client } from 'pg';
import { ApiResponse, auth, jsonBody, request, startTestApp, TestApp } from './support/test-app.js';

/** Keeps this process's event loop busy, which is the app's: the pressure under-pressure measures. */
function blockEventLoop(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

const expectShed = (response: ApiResponse | undefined) => {
  expect(response?.status).toBe(503);
  expect(response?.body).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
  expect(response?.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(response?.headers.get('content-type')).toMatch(/^application\/json/);
};

describe('load shedding on requests in flight', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ loadShedding: { maxInFlight: 1, maxEventLoopDelayMs: 0, maxEventLoopUtilization: 0 } });
  });
  afterAll(() => t.close());

  const keyed = (key: string) => {
    const init = jsonBody({ name: 'In flight', categoryId: 1 });
    return { ...init, headers: { ...(init.headers as Record<string, string>), 'idempotency-key': key } };
  };

  /**
   * Runs `whileShedding` while a create with the Idempotency-Key `key` is in flight, waiting on the lock of that
   * key's row, held uncommitted by another session; that create then completes.
   */
  async function withRequestInFlight(key: string, whileShedding: () => Promise<void>): Promise<void> {
    expect((await request(t.origin, '/v1/pets', keyed(`probe-${key}`))).status).toBe(201);
    const { rows } = await t.sql.query<{ api_key_id: string }>(
      `SELECT api_key_id FROM idempotency_keys WHERE idempotency_key = $1`,
      [`probe-${key}`],
    );
    const holder = new Client({ connectionString: t.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_fingerprint) VALUES ($1, $2, 'x')`,
        [rows[0].api_key_id, key],
      );
      const inFlight = request(t.origin, '/v1/pets', keyed(key));
      const deadline = Date.now() + 2_000;
      let waiting = false;
      while (!waiting && Date.now() < deadline) {
        const activity = await t.sql.query(
          `SELECT 1 FROM pg_stat_activity WHERE application_name = 'animal-store' AND wait_event_type = 'Lock'`,
        );
        waiting = activity.rowCount === 1;
      }
      expect(waiting).toBe(true);
      await whileShedding();
      await holder.query('ROLLBACK');
      expect((await inFlight).status).toBe(201);
    } finally {
      await holder.end();
    }
  }

  it('refuses a request at once with 503 while the limit is taken, never the probes, and serves again after', async () => {
    await withRequestInFlight('held', async () => {
      expectShed(await request(t.origin, '/v1/pets', { headers: auth() }));
      const probes = await Promise.all(['/health/live', '/health/ready'].map((path) => fetch(`${t.origin}${path}`)));
      expect(probes.map((probe) => probe.status)).toEqual([200, 200]);
    });
    expect((await request(t.origin, '/v1/pets', { headers: auth() })).status).toBe(200);
  });
});

describe('load shedding on event-loop delay', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ loadShedding: { maxInFlight: 0, maxEventLoopDelayMs: 50, maxEventLoopUtilization: 0 } });
  });
  afterAll(() => t.close());

  it('answers 503 service_unavailable with Retry-After past the event-loop delay threshold, then recovers', async () => {
    let shed: Awaited<ReturnType<typeof request>> | undefined;
    for (let attempt = 0; attempt < 20 && !shed; attempt++) {
      blockEventLoop(400);
      const response = await request(t.origin, '/v1/pets', { headers: auth() });
      if (response.status === 503) shed = response;
    }
    expectShed(shed);

    const deadline = Date.now() + 5_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      status = (await request(t.origin, '/v1/pets', { headers: auth() })).status;
    }
    expect(status).toBe(200);
  });
});
