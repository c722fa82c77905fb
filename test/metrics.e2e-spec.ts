import { generateApiKey } from '../src/auth/api-keys/api-key-format.js';
import type { Pet } from '../src/pets/dto/pet.dto.js';
import { auth, jsonBody, request } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

const METRICS_TOKEN = 'metrics-token-0123456789';

/** The value of one sample line, e.g. sample(text, 'http_request_duration_seconds_count{method="GET",...}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics', () => {
  const t = testAppPerBlock();

  it('exposes request counts and latency by route and status, the database pool and the process, outside /v1, without an API key', async () => {
    await request(t.origin, '/v1/pets', jsonBody({ name: 'Rex', categoryId: 1 }));
    for (const invalid of [{ name: '' }, { name: '' }]) await request(t.origin, '/v1/pets', jsonBody(invalid));
    await request(t.origin, '/v1/no-such-thing', { headers: auth() });

    const metrics = await request(t.origin, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = metrics.text;
    expect(sample(text, 'http_request_duration_seconds_count{method="POST",route="/v1/pets",status="201"}')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count{method="POST",route="/v1/pets",status="400"}')).toBe(2);
    // Unknown paths share one series: a scanner cannot blow up the label set.
    expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(
      sample(text, 'http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/v1/pets",status="400"}'),
    ).toBe(2);
    expect(text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
    const total = sample(text, 'animal_store_db_pool_connections{state="total"}');
    expect(total).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'animal_store_db_pool_connections{state="idle"}')).toBeLessThanOrEqual(total!);
    expect(sample(text, 'animal_store_db_pool_connections{state="waiting"}')).toBe(0);
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);

    expect((await request(t.origin, '/v1/metrics')).status).toBe(404);
  });

  it('counts calls to the deprecated getPet, with as many series after 1,000 calling keys as after 10', async () => {
    const created = await request<Pet>(t.origin, '/v1/pets', jsonBody({ name: 'Old', categoryId: 1 }));
    const keys = Array.from({ length: 1_000 }, () => generateApiKey());
    await t.sql.query(
      `INSERT INTO api_keys (name, prefix, digest) SELECT 'caller', left(key, 12), encode(sha256(key::bytea), 'hex')
         FROM unnest($1::text[]) key`,
      [keys],
    );
    const seriesAfter = async (callers: string[]) => {
      for (const key of callers) {
        expect((await request(t.origin, `/v1/pets/${created.body.id}`, { headers: auth(key) })).status).toBe(200);
      }
      const text = (await request(t.origin, '/metrics')).text;
      // The service's own series; the runtime's (garbage collection kinds, say) come and go with the process.
      const own = text.split('\n').filter((line) => /^(animal_store|http)_/.test(line));
      return { series: own.length, text };
    };

    const after10 = await seriesAfter(keys.slice(0, 10));
    const after1000 = await seriesAfter(keys.slice(10));
    expect(after1000.series).toBe(after10.series);
    expect(sample(after1000.text, 'animal_store_deprecated_calls_total{operation="getPet"}')).toBe(1_000);
    expect(after1000.text).not.toContain(keys[0]);
  }, 120_000);
});

describe('/metrics with METRICS_TOKEN', () => {
  const t = testAppPerBlock({ metricsToken: METRICS_TOKEN });

  it('answers 401 with the Error body without the token, or with an API key instead, and 200 with the token', async () => {
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
    // Read from the header only: a URL ends up in logs.
    expect((await request(t.origin, `/metrics?access_token=${METRICS_TOKEN}`)).status).toBe(401);
    const metrics = await request(t.origin, '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('http_request_duration_seconds_count');
  });
});
