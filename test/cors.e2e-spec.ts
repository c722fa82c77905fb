import { expect } from '@jest/globals';
import { PREFLIGHT_MAX_AGE_SECONDS } from '../src/edge/cors.js';
import { preflight, SHOP } from './support/preflight.js';
import { auth, jsonBody, request } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

const ELSEWHERE = 'https://elsewhere.example';
const EXPOSED =
  'Link, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Deprecation, Sunset, ' +
  'X-Request-Id, WWW-Authenticate, Location';

const corsHeaders = (headers: Headers) =>
  Object.fromEntries([...headers].filter(([name]) => name.startsWith('access-control-')));

/** What every answer to the allowed origin carries, errors included. */
function expectReadableBy(headers: Headers, origin = SHOP): void {
  expect(corsHeaders(headers)).toEqual({
    'access-control-allow-origin': origin,
    'access-control-expose-headers': EXPOSED,
  });
  expect(headers.get('vary')).toBe('Origin');
  expect(headers.get('cross-origin-resource-policy')).toBe('cross-origin');
}

/** How many preflights the service counted in `http_request_duration_seconds_count`: under OPTIONS, like any other request. */
async function preflightsCounted(origin: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const series = 'http_request_duration_seconds_count{method="OPTIONS",route="*",status="204"} ';
  const line = text.split('\n').find((candidate) => candidate.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}

describe('CORS_ORIGINS set', () => {
  const t = testAppPerBlock({ corsOrigins: [SHOP, 'http://localhost:8080'], rateLimitPerMinute: 10 });
  const fromShop = (init: RequestInit = {}) => ({ ...init, headers: { ...init.headers, origin: SHOP } });

  it("answers a preflight with 204, the route's methods, the request headers allowed, Max-Age and Vary", async () => {
    const answer = await preflight(t.origin, '/v1/pets', 'POST', 'authorization, content-type, idempotency-key');

    expect(answer.status).toBe(204);
    expect(await answer.text()).toBe('');
    expect(corsHeaders(answer.headers)).toEqual({
      'access-control-allow-origin': SHOP,
      'access-control-allow-methods': 'GET, HEAD, POST',
      'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key',
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
      'access-control-expose-headers': EXPOSED,
    });
    expect(answer.headers.get('vary')).toBe('Origin');
    expect(answer.headers.get('x-request-id')).toMatch(/.+/);
    const single = await preflight(t.origin, '/v1/pets/1');
    expect(single.status).toBe(204);
    expect(single.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
  });

  // A preflight from another origin gets no CORS headers, so its page reads nothing: test/browser/cors.browser-spec.ts.
  it('keeps 405, without CORS headers, for an OPTIONS from the allowed origin that is no preflight', async () => {
    const plain = await fetch(`${t.origin}/v1/pets`, { method: 'OPTIONS', headers: { origin: SHOP } });
    expect(plain.status).toBe(405);
    expect(plain.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(await plain.json()).toEqual({
      code: 'method_not_allowed',
      message: 'OPTIONS is not allowed on this path.',
      status: 405,
    });
    expect(corsHeaders(plain.headers)).toEqual({});
  });

  it('lets the allowed origin read answers and refusals: 200, 401, 404 and 413, with what it needs exposed', async () => {
    const answers = [
      await request(t.origin, '/v1/pets', fromShop({ headers: auth() })),
      await request(t.origin, '/v1/pets', fromShop()),
      await request(t.origin, '/v1/pets/999999', fromShop({ headers: auth() })),
      await request(t.origin, '/v1/pets', fromShop(jsonBody({ name: 'x'.repeat(20 * 1024), categoryId: 1 }))),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 404, 413]);
    for (const answer of answers) expectReadableBy(answer.headers);
    expect(answers[1].headers.get('www-authenticate')).toBe('Bearer realm="animal-store"');
  });

  // Vary: Origin on the 400s refused before CORS (a repeated header, a malformed URL): request-pipeline.e2e-spec.ts.
  it('keeps the docs and the probes as they were', async () => {
    for (const path of ['/health/live', '/docs-json']) {
      const answer = await fetch(`${t.origin}${path}`, { headers: { origin: SHOP } });
      expect(answer.status).toBe(200);
      expect(corsHeaders(answer.headers)).toEqual({});
      expect(answer.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    }
  });

  it("counts 200 preflights against no budget, only in the metrics, and lets the allowed origin read the key's 429 and its Retry-After", async () => {
    const counted = await preflightsCounted(t.origin);
    const before = await request(t.origin, '/v1/pets', fromShop({ headers: auth() }));
    const remaining = Number(before.headers.get('x-ratelimit-remaining'));
    expect(remaining).toBeGreaterThan(1);
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => preflight(t.origin)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(204));
    }
    const after = await request(t.origin, '/v1/pets', fromShop({ headers: auth() }));
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe(String(remaining - 1));
    expect((await preflightsCounted(t.origin)) - counted).toBe(200);

    let limited: Awaited<ReturnType<typeof request>> | undefined;
    for (let attempt = 0; attempt < 12 && !limited; attempt++) {
      const answer = await request(t.origin, '/v1/pets', fromShop({ headers: auth() }));
      if (answer.status === 429) limited = answer;
    }
    expect(limited?.status).toBe(429);
    expectReadableBy(limited!.headers);
    expect(limited!.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

// A 503 shed before the guards, readable by the allowed origin: test/request-pipeline.e2e-spec.ts.
describe('CORS_ORIGINS=*', () => {
  const t = testAppPerBlock({ corsOrigins: ['*'] });

  it('lets any origin read answers and refusals', async () => {
    const listed = await request(t.origin, '/v1/pets', { headers: { ...auth(), origin: ELSEWHERE } });
    const refused = await request(t.origin, '/v1/pets', { headers: { origin: ELSEWHERE } });
    expect([listed.status, refused.status]).toEqual([200, 401]);
    for (const answer of [listed, refused]) expectReadableBy(answer.headers, '*');
  });
});

describe('CORS_ORIGINS unset', () => {
  const t = testAppPerBlock();

  // What a page on another origin reads (nothing): test/browser/cors.browser-spec.ts; OPTIONS is 405:
  // test/pets.e2e-spec.ts. A bad CORS_ORIGINS entry: src/config/app-config.spec.ts and test/entry-points.e2e-spec.ts.
  it('gives no CORS headers and no Vary to any origin, with a same-origin resource policy', async () => {
    const listed = await request(t.origin, '/v1/pets', { headers: { ...auth(), origin: SHOP } });
    expect(listed.status).toBe(200);
    expect(corsHeaders(listed.headers)).toEqual({});
    expect(listed.headers.get('vary')).toBeNull();
    expect(listed.headers.get('cross-origin-resource-policy')).toBe('same-origin');
  });
});
