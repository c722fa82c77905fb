import { startTcpProxy, TcpProxy } from './support/tcp-proxy.js';
import { ApiResponse, auth, jsonBody, request, startTestApp, TestApp } from './support/test-app.js';

const UNAVAILABLE = {
  code: 'service_unavailable',
  message: 'The service is temporarily unavailable; retry later.',
  status: 503,
};

/** The app reaches PostgreSQL through a proxy this file cuts and restores under it. */
describe('database outage (e2e)', () => {
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    const admin = new URL(process.env.TEST_DATABASE_ADMIN_URL!);
    proxy = await startTcpProxy({ host: admin.hostname, port: Number(admin.port) });
    t = await startTestApp(
      {},
      {
        appDatabaseUrl: (url) => {
          const viaProxy = new URL(url);
          viaProxy.hostname = '127.0.0.1';
          viaProxy.port = String(proxy.port);
          return viaProxy.toString();
        },
      },
    );
  });

  afterAll(async () => {
    await proxy.restore().catch(() => undefined);
    await t.close();
    await proxy.close();
  });

  const list = () => request(t.origin, '/v1/pets', { headers: auth() });

  /** Repeats the request until it answers `status`, for at most `deadlineMs`. */
  async function eventually(send: () => Promise<ApiResponse>, status: number, deadlineMs = 15_000) {
    const deadline = Date.now() + deadlineMs;
    let response = await send();
    while (response.status !== status && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      response = await send();
    }
    return response;
  }

  it('answers 503 with Retry-After while the database is unreachable, and serves again once it is back', async () => {
    expect((await request(t.origin, '/v1/pets', jsonBody({ name: 'Rex', categoryId: 1 }))).status).toBe(201);

    await proxy.cut();
    const responses = [
      await list(),
      await request(t.origin, '/v1/pets', jsonBody({ name: 'Tom', categoryId: 1 })),
      await request(t.origin, '/v1/pets/1', { headers: auth() }),
    ];

    for (const response of responses) {
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual(UNAVAILABLE);
    }

    await proxy.restore();
    const back = await eventually(list, 200);
    expect(back.body).toEqual([{ id: 1, name: 'Rex', categoryId: 1, status: 'available' }]);
    expect(Number((await t.sql.query('SELECT count(*) FROM pets')).rows[0].count)).toBe(1);
  });
});
