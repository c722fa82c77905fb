import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { KEY_CACHE_TTL_MS } from '../src/auth/api-key-store.js';
import { expectRateLimited } from './support/expect-rate-limited.js';
import { auth, request, startTestApp, TEST_KEY, TestApp } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

const randomIssuedKey = () => `pet_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;

describe('per-key rate limit', () => {
  const t = testAppPerBlock({ rateLimitPerMinute: 5 });

  it('counts down in X-RateLimit-* headers, then answers 429 with Retry-After', async () => {
    for (let remaining = 4; remaining >= 0; remaining -= 1) {
      const response = await request(t.origin, '/v1/pets', { headers: auth() });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('5');
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
      expect(Number(response.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
    }
    expectRateLimited(await request(t.origin, '/v1/pets', { headers: auth() }), 5);
    // The budget is per key, across routes.
    expectRateLimited(await request(t.origin, '/v1/pets/1', { headers: auth() }), 5);
  });
});

describe('per-address budget for failed authentication', () => {
  const METRICS_TOKEN = 'metrics-token-for-the-budget-0123456789';
  const t = testAppPerBlock({ authFailureLimitPerMinute: 3, metricsToken: METRICS_TOKEN, rateLimitPerMinute: 0 });
  const list = (key?: string) => request(t.origin, '/v1/pets', { headers: key === undefined ? {} : auth(key) });
  const scrape = (token: string) => request(t.origin, '/metrics', { headers: auth(token) });

  it('answers wrong keys and wrong /metrics tokens 401 up to one budget, then 429, not counting requests without credentials; a valid key and the right token from the same address are still served', async () => {
    // Requests without credentials are not counted: after 10 of them, the whole budget is left.
    for (let i = 0; i < 10; i += 1) expect((await list()).status).toBe(401);
    for (let i = 0; i < 2; i += 1) expect((await list(randomIssuedKey())).status).toBe(401);
    expect((await scrape('wrong-metrics-token-0-0123456789')).status).toBe(401);
    expectRateLimited(await list(randomIssuedKey()), 3);
    expectRateLimited(await list('not-even-shaped-like-a-key'), 3);
    expectRateLimited(await scrape('wrong-metrics-token-x-0123456789'), 3);
    // One client's failures never lock out the others behind the same address (an office NAT, a proxy).
    expect((await list(TEST_KEY)).status).toBe(200);
    expect((await request(t.origin, '/v1/pets/1', { headers: auth() })).status).toBe(404);
    expect((await scrape(METRICS_TOKEN)).status).toBe(200);
    // Without credentials nothing is guessed: 401 as always, and not counted.
    expect((await list()).status).toBe(401);
  });

  it('limit 0 turns per-key limiting off: no headers, no 429', async () => {
    const responses = await Promise.all(
      Array.from({ length: 30 }, () => request(t.origin, '/v1/pets', { headers: auth() })),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(30).fill(200));
    expect(responses[0].headers.get('x-ratelimit-limit')).toBeNull();
  });
});

// An expired key keeps its 401 past the budget: test/at-scale.e2e-spec.ts; counted as expired: key-lifecycle.e2e-spec.ts.
describe('revoked keys and the failed-authentication budget', () => {
  const BUDGET = 3;
  const t = testAppPerBlock({ authFailureLimitPerMinute: BUDGET });
  const revokedKeys = Array.from({ length: BUDGET }, randomIssuedKey);
  beforeAll(async () => {
    await t.sql.query(
      `INSERT INTO api_keys (name, prefix, digest, revoked_at)
       SELECT 'revoked', left(key, 12), encode(sha256(convert_to(key, 'UTF8')), 'hex'), now() FROM unnest($1::text[]) key`,
      [revokedKeys],
    );
  });
  const list = (key: string) => request(t.origin, '/v1/pets', { headers: auth(key) });
  const refusals = async () => {
    const text = (await request(t.origin, '/metrics')).text;
    const count = (reason: string) =>
      Number(new RegExp(`^animal_store_api_key_refusals_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    return { unknown: count('unknown'), revoked: count('revoked') };
  };

  it('answers a revoked key as an unknown one, 401 then 429 past the budget, each counted under its reason; once the address has spent its lookups, neither is looked up', async () => {
    // Under the budget (as a revoked key's own client keeps calling), told no more than that the key is not valid.
    const invalid = { code: 'unauthorized', message: 'The API key is not valid.', status: 401 };
    for (const key of revokedKeys) expect((await list(key)).body).toEqual(invalid);
    const before = await refusals();

    // Past the budget, a revoked key says no more than an unknown string: that it is not served here.
    expectRateLimited(await list(revokedKeys[0]), BUDGET);
    expectRateLimited(await list(randomIssuedKey()), BUDGET);

    expect(await refusals()).toEqual({ unknown: before.unknown + 1, revoked: before.revoked + 1 });

    // The lookups the address may still spend past its budget.
    for (let i = 0; i < BUDGET; i += 1) expectRateLimited(await list(randomIssuedKey()), BUDGET);
    // What an attacker waits for: the answers cached for the revoked keys lapse, and only a lookup could tell them apart.
    await delay(KEY_CACHE_TTL_MS);
    // With the table out of reach any lookup fails (a 503): every 429 below is an answer given without one, for
    // the revoked key and the unknown string alike. The proof is the answer, not a timing the machine's noise can blur.
    await t.sql.query('ALTER TABLE api_keys RENAME TO api_keys_out_of_reach');
    try {
      for (const revoked of revokedKeys) {
        expectRateLimited(await list(revoked), BUDGET);
        expectRateLimited(await list(randomIssuedKey()), BUDGET);
      }
    } finally {
      await t.sql.query('ALTER TABLE api_keys_out_of_reach RENAME TO api_keys');
    }
  });
});

describe('the failed-authentication budget behind a proxy (TRUST_PROXY)', () => {
  const from = (address: string, key = randomIssuedKey()) => ({
    headers: { ...auth(key), 'x-forwarded-for': address },
  });
  const apps: TestApp[] = [];
  afterAll(() => Promise.all(apps.map((app) => app.close())));
  const start = async (trustProxy: string[]) => {
    const app = await startTestApp({ authFailureLimitPerMinute: 3, trustProxy });
    apps.push(app);
    return app;
  };
  const lockOut = async (t: TestApp, address: string) => {
    for (let i = 0; i < 3; i += 1) expect((await request(t.origin, '/v1/pets', from(address))).status).toBe(401);
    expectRateLimited(await request(t.origin, '/v1/pets', from(address)), 3);
  };

  it('counts the forwarded client address when the request comes through a trusted proxy', async () => {
    const t = await start(['127.0.0.1']);
    await lockOut(t, '203.0.113.7');
    // Another client behind the same proxy keeps its own budget.
    expect((await request(t.origin, '/v1/pets', from('203.0.113.8', TEST_KEY))).status).toBe(200);
    expect((await request(t.origin, '/v1/pets', from('203.0.113.8'))).status).toBe(401);
    // The proxy appends the address it saw: a forged first entry does not move the client to another budget.
    expectRateLimited(await request(t.origin, '/v1/pets', from('198.51.100.1, 203.0.113.7')), 3);
  });

  it.each([
    ['no proxy is trusted', []],
    ['the peer is not among the trusted proxies', ['10.0.0.0/8']],
  ])('ignores X-Forwarded-For when %s: the peer address is the client', async (_case, trusted) => {
    const t = await start(trusted);
    await lockOut(t, '203.0.113.7');
    expectRateLimited(await request(t.origin, '/v1/pets', from('203.0.113.8')), 3);
  });
});
