import type { ApiKeyIdentity } from '../src/auth/api-key-identity.js';
import { ApiKeyStore } from '../src/auth/api-key-store.js';
import type { Pet } from '../src/pets/dto/pet.dto.js';
import { auth, jsonBody, request, startTestApp, TEST_KEY, TestApp } from './support/test-app.js';

const METRICS_TOKEN = 'metrics-token-0123456789';

/** The value of one sample line, e.g. sample(text, 'http_requests_total{method="GET",...}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  let t: TestApp;
  let keyId: string;
  beforeAll(async () => {
    t = await startTestApp();
    keyId = ((await t.app.get(ApiKeyStore).verify(TEST_KEY)) as ApiKeyIdentity).id;
  });
  afterAll(() => t.close());

  it('exposes request counts and latency by route and status, outside /v1, without an API key', async () => {
    const created = await request(t.origin, '/v1/pets', jsonBody({ name: 'Rex', categoryId: 1 }));
    expect(created.status).toBe(201);
    await request(t.origin, '/v1/pets', jsonBody({ name: '' }));
    await request(t.origin, '/v1/pets', jsonBody({ name: '' }));
    await request(t.origin, '/v1/no-such-thing', { headers: auth() });

    const metrics = await request(t.origin, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = metrics.text;
    expect(sample(text, 'http_requests_total{method="POST",route="/v1/pets",status="201"}')).toBe(1);
    expect(sample(text, 'http_requests_total{method="POST",route="/v1/pets",status="400"}')).toBe(2);
    // Unknown paths share one series: a scanner cannot blow up the label set.
    expect(sample(text, 'http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count{method="POST",route="/v1/pets",status="201"}')).toBe(1);
    expect(
      sample(text, 'http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/v1/pets",status="400"}'),
    ).toBe(2);
    expect(text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);

    expect((await request(t.origin, '/v1/metrics')).status).toBe(404);
  });

  it('counts calls to the deprecated getPet by API key id', async () => {
    const created = await request<Pet>(t.origin, '/v1/pets', jsonBody({ name: 'Old', categoryId: 1 }));
    for (let call = 0; call < 3; call += 1) {
      expect((await request(t.origin, `/v1/pets/${created.body.id}`, { headers: auth() })).status).toBe(200);
    }
    const text = (await request(t.origin, '/metrics')).text;
    expect(sample(text, `animal_store_deprecated_calls_total{operation="getPet",key_id="${keyId}"}`)).toBe(3);
    expect(text).not.toContain(TEST_KEY);
  });

  it('reports the database pool and the default process metrics', async () => {
    const text = (await request(t.origin, '/metrics')).text;
    const total = sample(text, 'animal_store_db_pool_connections{state="total"}');
    const idle = sample(text, 'animal_store_db_pool_connections{state="idle"}');
    expect(total).toBeGreaterThanOrEqual(1);
    expect(idle).toBeLessThanOrEqual(total!);
    expect(sample(text, 'animal_store_db_pool_connections{state="waiting"}')).toBe(0);
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ metricsToken: METRICS_TOKEN });
  });
  afterAll(() => t.close());

  it('answers 401 with the Error body without the token, or with an API key instead', async () => {
    for (const headers of [{}, auth(), { authorization: `Bearer ${METRICS_TOKEN}x` }]) {
      const denied = await request(t.origin, '/metrics', { headers });
      expect(denied.status).toBe(401);
      expect(denied.body).toEqual({
        code: 'unauthorized',
        message: 'The metrics token is missing or not valid.',
        status: 401,
      });
      expect(denied.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    }
  });

  it('answers with the token', async () => {
    const metrics = await request(t.origin, '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('http_requests_total');
  });
});

describe('/metrics in production', () => {
  it('is not served without METRICS_TOKEN: 404, the same answer as any unknown path', async () => {
    const t = await startTestApp({ production: true });
    try {
      const metrics = await request(t.origin, '/metrics');
      const unknown = await request(t.origin, '/no-such-thing');
      expect(metrics.status).toBe(404);
      expect(metrics.body).toEqual({ code: 'not_found', message: 'No resource exists at this path.', status: 404 });
      expect(metrics.body).toEqual(unknown.body);
      expect(metrics.text).not.toContain('http_requests_total');
    } finally {
      await t.close();
    }
  });

  it('is served as in development once METRICS_TOKEN is set, to that token only', async () => {
    const t = await startTestApp({ production: true, metricsToken: METRICS_TOKEN });
    try {
      expect((await request(t.origin, '/metrics')).status).toBe(401);
      const metrics = await request(t.origin, '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(metrics.status).toBe(200);
      expect(metrics.text).toContain('http_requests_total');
    } finally {
      await t.close();
    }
  });
});
