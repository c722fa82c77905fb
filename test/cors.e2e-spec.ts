import { expect } from '@jest/globals';
import { join } from 'node:path';
import { UNUSED_DATABASE_URL } from '../dev/build-openapi-document.js';
import { PREFLIGHT_MAX_AGE_SECONDS } from '../src/edge/cors.js';
import { ensureBuilt, ROOT, run } from './support/built-service.js';
import { exchange, rawRequest } from './support/raw-http.js';
import { auth, jsonBody, request, startTestApp, TestApp, TEST_KEY } from './support/test-app.js';

const SHOP = 'https://shop.example';
const ELSEWHERE = 'https://elsewhere.example';
const EXPOSED =
  'Link, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Deprecation, Sunset, ' +
  'X-Request-Id, WWW-Authenticate, Location';

/** The preflight a browser sends before a `fetch` with an Authorization header. */
const preflight = (origin: string, path: string, method = 'GET', requestHeaders = 'authorization') =>
  fetch(`${origin}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin: SHOP,
      'access-control-request-method': method,
      'access-control-request-headers': requestHeaders,
    },
  });

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

function blockEventLoop(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

describe('CORS_ORIGINS set', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ corsOrigins: [SHOP, 'http://localhost:8080'], rateLimitPerMinute: 10 });
  });
  afterAll(() => t.close());
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

  it('gives no CORS headers to a preflight from another origin, and keeps 405 for an OPTIONS that is no preflight', async () => {
    const foreign = await fetch(`${t.origin}/v1/pets`, {
      method: 'OPTIONS',
      headers: { origin: ELSEWHERE, 'access-control-request-method': 'GET' },
    });
    expect(foreign.status).toBe(405);
    expect(corsHeaders(foreign.headers)).toEqual({});

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
    const listed = await request(t.origin, '/v1/pets', fromShop({ headers: auth() }));
    expect(listed.status).toBe(200);
    expectReadableBy(listed.headers);

    const unauthorized = await request(t.origin, '/v1/pets', fromShop());
    expect(unauthorized.status).toBe(401);
    expectReadableBy(unauthorized.headers);
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer realm="animal-store"');

    const missing = await request(t.origin, '/v1/pets/999999', fromShop({ headers: auth() }));
    expect(missing.status).toBe(404);
    expectReadableBy(missing.headers);

    const tooLarge = await request(
      t.origin,
      '/v1/pets',
      fromShop(jsonBody({ name: 'x'.repeat(20 * 1024), categoryId: 1 })),
    );
    expect(tooLarge.status).toBe(413);
    expectReadableBy(tooLarge.headers);
  });

  it('gives Vary: Origin to the 400s refused before CORS: a repeated Authorization, a malformed URL', async () => {
    const { host } = new URL(t.origin);
    const cases: [string, [string, string][]][] = [
      ['/v1/pets', [['Authorization', `Bearer ${TEST_KEY}`]]],
      ['/v1/pets/%E0%A4%A', []],
    ];
    for (const [path, extra] of cases) {
      const headers: [string, string][] = [
        ['Host', host],
        ['Origin', SHOP],
        ['Authorization', `Bearer ${TEST_KEY}`],
      ];
      const answer = await exchange(t.origin, rawRequest('GET', path, [...headers, ...extra]));
      expect({ path, status: answer?.status, vary: answer?.headers.get('vary') }).toEqual({
        path,
        status: 400,
        vary: 'Origin',
      });
    }
  });

  it('gives another origin no CORS headers, and keeps the docs and the probes as they were', async () => {
    const foreign = await request(t.origin, '/v1/pets', { headers: { ...auth(), origin: ELSEWHERE } });
    expect(foreign.status).toBe(200);
    expect(corsHeaders(foreign.headers)).toEqual({});

    for (const path of ['/health/live', '/docs-json']) {
      const answer = await fetch(`${t.origin}${path}`, { headers: { origin: SHOP } });
      expect(answer.status).toBe(200);
      expect(corsHeaders(answer.headers)).toEqual({});
      expect(answer.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    }
  });

  it("counts 200 preflights against no budget, only in the metrics: the key's X-RateLimit-Remaining moves by the one request between", async () => {
    const counted = await preflightsCounted(t.origin);
    const before = await request(t.origin, '/v1/pets', fromShop({ headers: auth() }));
    const remaining = Number(before.headers.get('x-ratelimit-remaining'));
    expect(remaining).toBeGreaterThan(1);
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => preflight(t.origin, '/v1/pets')));
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(204));
    }
    const after = await request(t.origin, '/v1/pets', fromShop({ headers: auth() }));
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe(String(remaining - 1));
    expect((await preflightsCounted(t.origin)) - counted).toBe(200);
  });

  it('lets the allowed origin read a 429 and its Retry-After', async () => {
    let limited: Awaited<ReturnType<typeof request>> | undefined;
    for (let attempt = 0; attempt < 12 && !limited; attempt++) {
      const answer = await request(t.origin, '/v1/pets', fromShop({ headers: auth(TEST_KEY) }));
      if (answer.status === 429) limited = answer;
    }
    expect(limited?.status).toBe(429);
    expectReadableBy(limited!.headers);
    expect(limited!.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('CORS_ORIGINS set, under load', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      corsOrigins: ['*'],
      loadShedding: { maxInFlight: 0, maxEventLoopDelayMs: 50, maxEventLoopUtilization: 0 },
    });
  });
  afterAll(() => t.close());

  it('lets any origin read a 503 shed before the guards, when CORS_ORIGINS is *', async () => {
    let shed: Awaited<ReturnType<typeof request>> | undefined;
    for (let attempt = 0; attempt < 20 && !shed; attempt++) {
      blockEventLoop(400);
      const answer = await request(t.origin, '/v1/pets', { headers: { ...auth(), origin: SHOP } });
      if (answer.status === 503) shed = answer;
    }
    expect(shed?.status).toBe(503);
    expectReadableBy(shed!.headers, '*');
    expect(shed!.body).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
  });
});

describe('CORS_ORIGINS unset', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers a preflight 405 and gives no CORS headers to any origin, with a same-origin resource policy', async () => {
    const answer = await preflight(t.origin, '/v1/pets');
    expect(answer.status).toBe(405);
    expect(corsHeaders(answer.headers)).toEqual({});

    const listed = await request(t.origin, '/v1/pets', { headers: { ...auth(), origin: SHOP } });
    expect(listed.status).toBe(200);
    expect(corsHeaders(listed.headers)).toEqual({});
    expect(listed.headers.get('vary')).toBeNull();
    expect(listed.headers.get('cross-origin-resource-policy')).toBe('same-origin');
  });
});

describe('CORS_ORIGINS at start-up', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  const start = (env: Record<string, string>) =>
    run(
      process.execPath,
      [join(ROOT, 'dist', 'src', 'main.js')],
      // A DATABASE_URL nothing connects to: the configuration is refused before any connection.
      { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', DATABASE_URL: UNUSED_DATABASE_URL, ...env },
      15_000,
    );

  // Every refused value and its message: src/config/app-config.spec.ts; here, what the built service does with one.
  it('refuses a CORS_ORIGINS entry that is not an origin at start, in one line saying why', async () => {
    const finished = await start({ CORS_ORIGINS: 'https://ok.example,https://shop.example/' });
    expect({ code: finished.code, stderr: finished.stderr.trim() }).toEqual({
      code: 1,
      stderr:
        'Invalid configuration: CORS_ORIGINS entry "https://shop.example/" is not an origin: write scheme://host[:port] ' +
        'in lower case, with no path and no trailing slash (e.g. https://shop.example), or *',
    });
  });
});
