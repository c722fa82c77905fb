import { expect } from '@jest/globals';
import { createApp } from '../src/app.setup.js';
import { parseApiKeys } from '../src/config/app-config.js';
import { defaultConfig } from './support/config.js';
import { pollUntil } from './support/poll.js';
import { auth, request, TEST_KEY } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

/** Keeps this process's event loop busy, which is the app's: the pressure under-pressure measures. */
function blockEventLoop(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

// Shedding on requests in flight: test/request-pipeline.e2e-spec.ts.
describe('load shedding on event-loop delay', () => {
  const loadShedding = { maxInFlight: 0, maxEventLoopDelayMs: 50, maxEventLoopUtilization: 0 };
  const t = testAppPerBlock({ loadShedding });

  it('answers 503 service_unavailable with Retry-After past the event-loop delay threshold, then recovers', async () => {
    let shed: Awaited<ReturnType<typeof request>> | undefined;
    for (let attempt = 0; attempt < 20 && !shed; attempt++) {
      blockEventLoop(400);
      const response = await request(t.origin, '/v1/pets', { headers: auth() });
      if (response.status === 503) shed = response;
    }
    expect(shed?.status).toBe(503);
    // Retry-After and the rest of the answer, the same whatever sheds: request-pipeline.e2e-spec.ts.
    expect(shed?.body).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });

    await pollUntil(async () => (await request(t.origin, '/v1/pets', { headers: auth() })).status === 200, {
      timeoutMs: 5_000,
      what: 'the service to serve again',
    });
  });

  it('sheds nothing for its own start-up: the first requests after listening are served though start-up blocked the loop', async () => {
    const config = { ...defaultConfig(t.database.url), apiKeys: parseApiKeys(TEST_KEY), loadShedding };
    const restarted = await createApp({ ...config, logLevel: 'silent' }, false);
    try {
      // Start-up's own work after the shedding began measuring (as building the OpenAPI document is).
      blockEventLoop(400);
      await restarted.listen(0, '127.0.0.1');
      const { port } = restarted.getHttpServer().address() as { port: number };
      // request() first fetches the document at /docs-json, so two requests come right after listening.
      expect((await request(`http://127.0.0.1:${port}`, '/v1/pets', { headers: auth() })).status).toBe(200);
    } finally {
      await restarted.close();
    }
  });
});
