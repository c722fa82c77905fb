import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { generateApiKey } from '../src/auth/api-keys/api-key-format.js';
import { ROOT } from './support/built-service.js';
import { callerContext, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';
import { pollUntil } from './support/poll.js';
import { ProductionService, startProductionService } from './support/production-service.js';
import { ServiceProcess } from './support/service-process.js';
import { setDatabaseReadOnly } from './support/test-database.js';

const KEY = 'tracing-test-key-0123456789abcdef';
const METRICS_TOKEN = 'tracing-metrics-token-0123456789abcdef';
const CURSOR_SECRET = 'tracing-cursor-secret-0123456789abcdef';
const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 };
const STATUS = { UNSET: 0, ERROR: 2 };
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

/**
 * The built service with tracing on (OTLP/JSON to a receiver this file runs), through the real HTTP server and a
 * real PostgreSQL: what its traces hold, and what they never hold.
 */
describe('traces', () => {
  let receiver: OtlpReceiver;
  let running: ProductionService;
  let service: ServiceProcess;
  let sql: Client;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    running = await startProductionService({
      API_KEYS: KEY,
      METRICS_TOKEN,
      CURSOR_SECRET,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
    ({ service, sql } = running);
  }, 300_000);

  afterAll(async () => {
    await running?.close();
    await receiver?.close();
  }, 60_000);

  const call = (path: string, init: RequestInit & { traceparent?: string } = {}) =>
    fetch(`${service.origin}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': 'application/json',
        ...(init.traceparent && { traceparent: init.traceparent }),
        ...(init.headers as Record<string, string>),
      },
    });

  const serverSpan = (spans: ReceivedSpan[]) => spans.find((span) => span.kind === SPAN_KIND.SERVER)!;
  const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
    spans.filter((span) => span.parentSpanId === parent.spanId);

  it('continues the caller’s trace: SERVER span with the route, its handler, one span per SQL statement; the request’s log line names the trace and one of its spans', async () => {
    const caller = callerContext();
    const response = await call('/v1/pets?limit=2', { traceparent: caller.traceparent });
    expect(response.status).toBe(200);
    const spans = await receiver.trace(caller.traceId);

    const server = serverSpan(spans);
    expect(server).toMatchObject({
      parentSpanId: caller.parentId,
      name: 'GET /v1/pets',
      status: { code: STATUS.UNSET },
      attributes: expect.objectContaining({
        'http.request.method': 'GET',
        'http.route': '/v1/pets',
        'http.response.status_code': 200,
      }) as unknown,
      resource: expect.objectContaining({ 'service.name': 'animal-store', 'service.version': version }) as unknown,
    });
    const [request] = childrenOf(spans, server);
    expect(request).toMatchObject({ name: 'request', kind: SPAN_KIND.INTERNAL });
    const [handler] = childrenOf(spans, request);
    expect(handler.name).toBe('handler - PetsController.list');
    const statements = childrenOf(spans, handler).filter((span) => span.name.startsWith('pg.query'));
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatchObject({
      kind: SPAN_KIND.CLIENT,
      attributes: expect.objectContaining({
        'db.system.name': 'postgresql',
        'db.query.text': expect.stringMatching(/^SELECT .* FROM pets .*\$1/) as unknown,
      }) as unknown,
    });
    const line = await pollUntil(() =>
      service.lines
        .map((text) => JSON.parse(text) as Record<string, unknown>)
        .find((entry) => entry.msg === 'request completed' && entry.trace_id === caller.traceId),
    );
    expect(line).toMatchObject({ route: '/v1/pets', status: 200 });
    expect(spans.map((span) => span.spanId)).toContain(line.span_id);
  });

  it('leaves a 4xx’s status unset', async () => {
    const missing = callerContext();
    expect((await call('/v1/pets/999999', { traceparent: missing.traceparent })).status).toBe(404);
    const refused = callerContext();
    const unauthorized = await call('/v1/pets', {
      traceparent: refused.traceparent,
      headers: { authorization: 'Bearer not-a-key-0123456789' },
    });
    expect(unauthorized.status).toBe(401);
    for (const traceId of [missing.traceId, refused.traceId]) {
      expect(serverSpan(await receiver.trace(traceId)).status).toEqual({ code: STATUS.UNSET, message: '' });
    }
  });

  it('marks a 503 for a database fault and a 500 as errors with their code', async () => {
    const unavailable = callerContext();
    await setDatabaseReadOnly(sql, true);
    try {
      const refused = await pollUntil(async () => {
        const response = await call('/v1/pets', {
          method: 'POST',
          body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
          traceparent: unavailable.traceparent,
        });
        return response.status === 503 && response;
      });
      expect(refused.status).toBe(503);
    } finally {
      await setDatabaseReadOnly(sql, false);
    }
    const internal = callerContext();
    await sql.query('ALTER TABLE pets RENAME TO pets_elsewhere');
    try {
      expect((await call('/v1/pets', { traceparent: internal.traceparent })).status).toBe(500);
    } finally {
      await sql.query('ALTER TABLE pets_elsewhere RENAME TO pets');
    }
    for (const [{ traceId }, code] of [
      [unavailable, 'service_unavailable'],
      [internal, 'internal_error'],
    ] as const) {
      const server = serverSpan(await receiver.trace(traceId));
      expect(server.status).toEqual({ code: STATUS.ERROR, message: code });
      expect(server.attributes['error.type']).toBe(code);
    }
  });

  it('exports no key sent in a URL: the path without its query string, key-shaped values redacted, even percent-encoded', async () => {
    // Keys as clients send them: an issued key's shape, and one of API_KEYS, in a query string or pasted in a path,
    // also percent-encoded (%5F, %5f, every character, or twice: `%25` is `%`, so the scrubber decodes until stable).
    const issued = generateApiKey();
    const everyCharacter = (key: string) =>
      [...key].map((char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`).join('');
    const sent: [url: string, path: string][] = [
      [`/v1/pets?access_token=${issued}`, '/v1/pets'],
      [`/v1/pets?token=${issued}&limit=2`, '/v1/pets'],
      [`/v1/nope/${issued}`, '/v1/nope/[redacted]'],
      [`/v1/nope/${KEY}`, '/v1/nope/[redacted]'],
      [`/v1/nope/${issued.replace('_', '%5F')}`, '/v1/nope/[redacted]'],
      [`/v1/pets/${issued.replace('_', '%5f')}`, '/v1/pets/[redacted]'],
      [`/v1/nope/${everyCharacter(issued)}`, '/v1/nope/[redacted]'],
      [`/v1/pets/${everyCharacter(KEY)}`, '/v1/pets/[redacted]'],
      [`/v1/nope/${issued.replace('_', '%255F')}`, '/v1/nope/[redacted]'],
      [`/v1/nope/%2570${issued.slice(1)}`, '/v1/nope/[redacted]'],
    ];
    const servers: ReceivedSpan[] = [];
    for (const [url] of sent) {
      const caller = callerContext();
      const response = await fetch(`${service.origin}${url}`, { headers: { traceparent: caller.traceparent } });
      expect(response.status).toBeGreaterThanOrEqual(400);
      servers.push(serverSpan(await receiver.trace(caller.traceId)));
    }

    // The bytes as they reached the collector.
    const exported = Buffer.concat(receiver.bodies).toString('utf8');
    const leaks = [issued, issued.slice(4), KEY, everyCharacter(KEY).slice(3), everyCharacter(issued).slice(12)];
    expect(leaks.filter((leak) => exported.toLowerCase().includes(leak.toLowerCase()))).toEqual([]);
    expect(servers.map((span) => [span.attributes['url.path'], span.attributes['url.query']])).toEqual(
      sent.map(([, path]) => [path, undefined]),
    );
    const fastifyPaths = receiver.spans
      .filter((span) => servers.some((server) => server.traceId === span.traceId) && span.name === 'request')
      .map((span) => span.attributes['url.path']);
    expect(fastifyPaths).toEqual(sent.map(([, path]) => path));
  });

  it('traces neither the probes nor /metrics, and puts no key, Authorization header, token or SQL value in any span', async () => {
    const caller = callerContext();
    const probes = ['/health/live', '/health/ready', '/metrics'];
    for (const path of probes) {
      const headers: Record<string, string> = path === '/metrics' ? { authorization: `Bearer ${METRICS_TOKEN}` } : {};
      expect((await call(path, { headers, traceparent: caller.traceparent })).status).toBe(200);
    }
    // A traced create after them: once its spans are in, the probes' would have been too.
    const after = callerContext();
    const name = `Marker-${randomBytes(6).toString('hex')}`;
    const body = JSON.stringify({ name, categoryId: 1 });
    expect((await call('/v1/pets', { method: 'POST', body, traceparent: after.traceparent })).status).toBe(201);
    const statements = (await receiver.trace(after.traceId)).map((span) => String(span.attributes['db.query.text']));
    // Statements keep their placeholders, never the values.
    expect(statements.find((text) => text.startsWith('INSERT INTO pets '))).toMatch(/\$1/);
    expect(receiver.spans.filter((span) => span.traceId === caller.traceId)).toEqual([]);
    expect(
      receiver.spans.filter((span) => probes.some((path) => String(span.attributes['url.path']).startsWith(path))),
    ).toEqual([]);

    const everything = JSON.stringify(receiver.spans).toLowerCase();
    const secrets = [KEY, METRICS_TOKEN, CURSOR_SECRET, 'Bearer', 'authorization', name];
    expect(secrets.filter((secret) => everything.includes(secret.toLowerCase()))).toEqual([]);
  });
});
