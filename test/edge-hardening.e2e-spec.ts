import { expect } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { connect, type Socket } from 'node:net';
import { API_RESPONSE_HEADERS } from '../src/edge/security-headers.js';
import { MAX_BODY_DEPTH } from '../src/edge/json-body-parser.js';
import { exchange, rawRequest, RawResponse } from './support/raw-http.js';
import { pollUntil } from './support/poll.js';
import { ApiResponse, auth, jsonBody, request, TEST_KEY } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';
import { defaultConfig } from './support/config.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const HOST: [string, string] = ['Host', 'animal-store.test'];
const BEARER: [string, string] = ['Authorization', `Bearer ${TEST_KEY}`];
const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
/** What every answer outside the docs carries, as the OWASP REST Security Cheat Sheet asks of an API. */
const API_HEADERS = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'strict-transport-security': expect.stringMatching(/^max-age=\d+/),
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'x-powered-by': null,
};

/** The Error body, the security headers (Cache-Control among them) and a request id: what every answer carries. */
function expectEdgeError(
  response: RawResponse | ApiResponse | undefined,
  status: number,
  code: string,
  { docs = false } = {},
) {
  expect(response).toBeDefined();
  expect({ status: response!.status, body: response!.body }).toEqual({
    status,
    body: { code, message: expect.any(String), status },
  });
  expect(response!.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(response!.headers.get('x-request-id')).toMatch(UUID);
  // Swagger UI's paths get helmet's policy for pages (src/edge/security-headers.ts): the same headers, other values.
  for (const [name, value] of API_RESPONSE_HEADERS) {
    if (docs) expect([name, response!.headers.has(name)]).toEqual([name, true]);
    else expect([name, response!.headers.get(name)]).toEqual([name, value]);
  }
}

/** `{"name":"B","categoryId":1,"x":[[[…]]]}` with `depth` levels in all (the outer object is level 1). */
const nested = (depth: number) => `{"name":"B","categoryId":1,"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

describe('the hardened edge (e2e)', () => {
  const MAX_CONNECTIONS = 8;
  const held: Socket[] = [];
  afterAll(() => held.forEach((socket) => socket.destroy()));
  const t = testAppPerBlock({ edgeLimits: { ...defaultConfig().edgeLimits, maxConnections: MAX_CONNECTIONS } });

  const post = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
    request(t.origin, '/v1/pets', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', ...headers },
      body,
    });

  it.each([
    ['nested 2,000 deep (about 4 KB)', nested(2_000)],
    // 8,190 levels of arrays inside the outer object: the deepest body the 16 KiB limit lets through.
    ['nested as deep as fits the body limit', nested((16 * 1024 - '{"name":"B","categoryId":1,"x":}'.length) / 2 + 1)],
    [
      '40 levels past the limit, with brackets in a string',
      `{"name":"${'['.repeat(100)}","x":${'['.repeat(40)}${']'.repeat(40)}}`,
    ],
  ])('answers a body %s with 400 invalid_json naming the limit, not 500', async (_case, body) => {
    const response = await post(body);

    expectEdgeError(response, 400, 'invalid_json');
    expect((response.body as { message: string }).message).toBe(
      `The request body is nested deeper than ${MAX_BODY_DEPTH} levels of arrays and objects.`,
    );
  });

  it('sends Cache-Control: no-store on every answer, and headers that let nothing load or frame a JSON answer', async () => {
    const created = await request<{ id: number }>(t.origin, '/v1/pets', jsonBody({ name: 'Rex', categoryId: 1 }));
    const answers = [
      created,
      await request(t.origin, '/v1/pets', { headers: auth() }),
      await request(t.origin, `/v1/pets/${created.body.id}`, { headers: auth() }),
      await request(t.origin, '/v1/pets/999999', { headers: auth() }),
      await request(t.origin, '/v1/pets?limit=0', { headers: auth() }),
      await request(t.origin, '/v1/pets'),
      await request(t.origin, '/v1/nothing-here'),
      await request(t.origin, '/metrics'),
      await request(t.origin, '/docs-json'),
    ];
    expect(answers.map((answer) => [answer.status, answer.headers.get('cache-control')])).toEqual(
      [201, 200, 200, 404, 400, 401, 404, 200, 200].map((status) => [status, 'no-store']),
    );
    // The docs' own policy: the docs test below.
    for (const answer of [...answers.slice(0, -1), await request(t.origin, '/health/live')]) {
      expect(Object.fromEntries(Object.keys(API_HEADERS).map((name) => [name, answer.headers.get(name)]))).toEqual(
        API_HEADERS,
      );
    }
  });

  describe('the request line and headers', () => {
    it.each([
      [
        'one of each single-value header, in any letter case',
        rawRequest('GET', '/v1/pets', [
          ['HOST', 'a.test'],
          ['AUTHORIZATION', `Bearer ${TEST_KEY}`],
        ]),
      ],
      ['an HTTP/1.0 request without Host', rawRequest('GET', '/v1/pets', [BEARER], '', { version: 'HTTP/1.0' })],
      [
        'a request with an Expect it does not know, instead of a bare 417',
        rawRequest('GET', '/v1/pets', [HOST, BEARER, ['Expect', 'x-y']]),
      ],
    ])('serves %s', async (_case, bytes) => {
      expect((await exchange(t.origin, bytes))!.status).toBe(200);
    });

    it('answers an HTTP/1.1 request without Host with a 400 Error, headers and request id included', async () => {
      const response = await exchange(t.origin, rawRequest('GET', '/v1/pets', [BEARER]));

      expectEdgeError(response, 400, 'validation_failed');
      expect((response!.body as { message: string }).message).toBe('An HTTP/1.1 request must carry a Host header.');
    });

    it.each([
      ['a control character in a header', rawRequest('GET', '/v1/pets', [HOST, ['X-Bad', 'a\u0001b']])],
      ['a space before the colon', 'GET /v1/pets HTTP/1.1\r\nHost: a\r\nX-Bad : 1\r\n\r\n'],
      ['an unknown method token', 'GE(T /v1/pets HTTP/1.1\r\nHost: a\r\n\r\n'],
      // Not closed without a word, as Node does with a CONNECT nobody handles.
      ['the method CONNECT', 'CONNECT db:5432 HTTP/1.1\r\nHost: db:5432\r\n\r\n'],
    ])('answers a request with %s with the Error body and every header, then closes', async (_case, bytes) => {
      const response = await exchange(t.origin, bytes, { waitForClose: true });

      expectEdgeError(response, 400, 'validation_failed');
      expect(response!.closed).toBe(true);
    });
  });

  // Sent as written: fetch would resolve the `..`.
  it.each([
    ['/docs/package.json'],
    ['/docs/index.js'],
    ['/docs/absolute-path.js'],
    ['/docs/swagger-ui-bundle.js.map'],
    ['/docs/swagger-ui.js'],
    ['/docs/README.md'],
    ['/docs/oauth2-redirect.html'],
    ['/docs/../package.json'],
  ])('answers %s, which the UI does not load, with 404 not_found (not 403)', async (path) => {
    expectEdgeError(await exchange(t.origin, rawRequest('GET', path, [HOST])), 404, 'not_found', { docs: true });
  });

  it.each(['/docs', '/docs-json'])(
    'the docs (%s) carry helmet’s full set with a policy Swagger UI works under',
    async (path) => {
      const response = await request(t.origin, path);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(response.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(response.headers.get('x-dns-prefetch-control')).toBe('off');
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self' 'unsafe-inline'");
      expect(csp).toContain("img-src 'self' data:");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('upgrade-insecure-requests');
    },
  );

  describe('Content-Encoding', () => {
    const body = JSON.stringify({ name: 'Zipped', categoryId: 1 });

    it.each([
      ['a plain body labelled gzip', body, 'gzip'],
      ['a real gzip body', new Uint8Array(gzipSync(body)), 'gzip'],
      ['a body labelled br', body, 'br'],
      ['a body labelled deflate', body, 'deflate'],
      ['two codings', body, 'identity, gzip'],
    ])('refuses %s with 415 and Accept-Encoding: identity, storing nothing', async (_case, sent, encoding) => {
      const response = await post(sent, { 'content-encoding': encoding });

      expectEdgeError(response, 415, 'unsupported_media_type');
      expect(response.headers.get('accept-encoding')).toBe('identity');
      const stored = await t.sql.query(`SELECT 1 FROM pets WHERE name = 'Zipped'`);
      expect(stored.rowCount).toBe(0);
    });

    it('accepts identity', async () => {
      const response = await post(JSON.stringify({ name: 'Plain', categoryId: 1 }), { 'content-encoding': 'identity' });
      expect(response.status).toBe(201);
    });
  });

  // Last: the connections it holds stay open until the app closes.
  it(`holds at most ${MAX_CONNECTIONS} connections; the next is closed without an answer, and served once one frees`, async () => {
    const openConnections = () =>
      new Promise<number>((resolve, reject) =>
        t.app.getHttpServer().getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    const { hostname, port } = new URL(t.origin);
    for (let open = await openConnections(); open < MAX_CONNECTIONS; open += 1) {
      const socket = connect(Number(port), hostname);
      socket.on('error', () => undefined);
      held.push(socket);
      await pollUntil(async () => (await openConnections()) === open + 1, { what: `connection ${open + 1}` });
    }

    const refused = await exchange(t.origin, rawRequest('GET', '/v1/pets', [HOST, BEARER]));
    expect(refused).toBeUndefined();

    held.pop()!.destroy();
    await pollUntil(async () => (await openConnections()) < MAX_CONNECTIONS, { what: 'a connection to close' });
    const served = await exchange(t.origin, rawRequest('GET', '/v1/pets', [HOST, BEARER]));
    expect(served!.status).toBe(200);
  });
});

/** A create that sends its headers, then its body a byte at a time, far slower than the request time limit allows. */
const slowUpload = (socket: Socket): void => {
  socket.write(rawRequest('POST', '/v1/pets', [HOST, BEARER, JSON_TYPE, ['Content-Length', '16000']]));
  const timer = setInterval(() => (socket.writable ? socket.write(' ') : clearInterval(timer)), 100);
  socket.once('close', () => clearInterval(timer));
};

describe('time limits (e2e)', () => {
  const LIMITS = { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 1_500, maxConnections: 8 };
  const t = testAppPerBlock({ edgeLimits: LIMITS });

  it.each([
    ['a body sent one byte at a time', 'request', slowUpload, LIMITS.requestTimeoutMs],
    ['headers that never end', 'header', 'GET /v1/pets HTTP/1.1\r\nHost: a\r\nX-Slow: 1', LIMITS.headersTimeoutMs],
  ])('answers %s with 408 once the %s time limit is over, and closes', async (_case, _limit, send, limitMs) => {
    const response = await exchange(t.origin, send, { waitForClose: true, timeoutMs: 10_000 });

    expectEdgeError(response, 408, 'request_timeout');
    expect(response!.closed).toBe(true);
    // Node checks the limits on an interval, not at the instant they pass.
    expect(response!.elapsedMs).toBeGreaterThanOrEqual(limitMs - 50);
    expect(response!.elapsedMs).toBeLessThan(limitMs + 1_500);
  });

  it('closes a kept-alive connection idle for longer than the keep-alive timeout', async () => {
    let closedAfter = 0;
    const answered = await exchange(
      t.origin,
      (socket) => {
        socket.write(rawRequest('GET', '/v1/pets', [HOST, BEARER]));
        const started = Date.now();
        socket.once('close', () => (closedAfter = Date.now() - started));
      },
      { waitForClose: true, timeoutMs: 10_000 },
    );
    expect(answered!.status).toBe(200);
    expect(answered!.headers.get('keep-alive')).toBe('timeout=1');
    expect(closedAfter).toBeGreaterThanOrEqual(LIMITS.keepAliveTimeoutMs - 100);
    expect(closedAfter).toBeLessThan(LIMITS.keepAliveTimeoutMs + 2_000);
  });
});
