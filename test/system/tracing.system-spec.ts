import { randomBytes } from 'node:crypto';
import { ensureBuilt } from '../support/built-service.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { ServiceProcess, startService } from '../support/service-process.js';
import { createTestDatabase, TestDatabase } from '../support/test-database.js';

const KEY = 'tracing-system-key-0123456789abcdef';
const SERVER_KIND = 2;

const traced = (origin: string, path = '/v1/pets') => {
  const traceId = randomBytes(16).toString('hex');
  const response = fetch(`${origin}${path}`, {
    headers: { authorization: `Bearer ${KEY}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
  });
  return { traceId, response };
};

/** The built service exporting over OTLP/HTTP, as operators run it with a collector. */
describe('tracing to an OTLP/HTTP collector', () => {
  let database: TestDatabase;
  let redis: RedisServer;
  let service: ServiceProcess | undefined;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    await ensureBuilt();
    database = await createTestDatabase();
    redis = await startRedisServer();
  }, 300_000);

  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });

  afterEach(async () => {
    service?.kill('SIGTERM');
    await service?.exited;
    service = undefined;
    await receiver.close();
  }, 60_000);

  afterAll(async () => {
    await redis?.stop();
    await database?.drop();
  }, 60_000);

  const start = (env: Record<string, string>) =>
    startService({
      DATABASE_URL: database.url,
      API_KEYS: KEY,
      NODE_ENV: 'production',
      CURSOR_SECRET: 'tracing-system-cursor-secret-0123456789',
      MIGRATIONS_RUN: 'true',
      OTEL_BSP_SCHEDULE_DELAY: '20',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      ...env,
    });

  it.each([
    ['http/protobuf', 'application/x-protobuf'],
    ['http/json', 'application/json'],
  ])(
    'exports in %s, with a span per Redis command when the rate limits live in Redis',
    async (protocol, type) => {
      service = await start({
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        REDIS_URL: redis.url,
        RATE_LIMIT_PER_MINUTE: '1000',
        OTEL_SERVICE_NAME: 'animal-store-system-test',
      });
      const { traceId, response } = traced(service.origin);
      expect((await response).status).toBe(200);
      const spans = await pollUntil(() => {
        const trace = receiver.spans.filter((span) => span.traceId === traceId);
        return trace.some((span) => span.name === 'GET /v1/pets') && trace;
      });
      expect(new Set(receiver.contentTypes)).toEqual(new Set([type]));
      expect(spans[0].resource['service.name']).toBe('animal-store-system-test');
      expect(new Set(spans.map((span) => span.scope))).toEqual(
        new Set([
          '@opentelemetry/instrumentation-http',
          '@fastify/otel',
          '@opentelemetry/instrumentation-pg',
          '@opentelemetry/instrumentation-ioredis',
        ]),
      );
      const redisSpans = spans.filter((span) => span.scope === '@opentelemetry/instrumentation-ioredis');
      // The command only: the counters' keys are derived from callers' keys and addresses.
      expect(redisSpans.map((span) => span.attributes['db.query.text'] ?? span.attributes['db.statement'])).toEqual(
        redisSpans.map((span) => span.name),
      );
    },
    120_000,
  );

  it('with OTEL_PROPAGATORS=none, starts its own trace whatever traceparent the caller sends', async () => {
    service = await start({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_PROPAGATORS: 'none' });
    const { traceId, response } = traced(service.origin);
    expect((await response).status).toBe(200);
    const server = await pollUntil(
      () => receiver.spans.find((span) => span.name === 'GET /v1/pets' && span.kind === SERVER_KIND),
      { what: 'the SERVER span' },
    );
    expect({ traceId: server.traceId === traceId, parentSpanId: server.parentSpanId }).toEqual({
      traceId: false,
      parentSpanId: '',
    });
    expect(receiver.spans.filter((span) => span.traceId === traceId)).toEqual([]);
  }, 120_000);

  it('serves as usual while the collector hangs: spans are dropped, and the log says so once', async () => {
    receiver.answering = false;
    service = await start({
      OTEL_EXPORTER_OTLP_TIMEOUT: '100',
      OTEL_BSP_EXPORT_TIMEOUT: '100',
      OTEL_BSP_MAX_QUEUE_SIZE: '16',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8',
    });
    const { origin } = service;
    const statuses: number[] = [];
    // Requests keep coming while export after export times out.
    await pollUntil(
      async () => {
        const answers = await Promise.all(Array.from({ length: 10 }, () => traced(origin).response));
        statuses.push(...answers.map((answer) => answer.status));
        return receiver.bodies.length >= 5;
      },
      { timeoutMs: 30_000, what: 'five exports to time out' },
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    const tracingLines = () =>
      service!.lines
        .map((line) => JSON.parse(line) as { context?: string; msg: string })
        .filter((line) => line.context === 'Tracing');
    await pollUntil(() => tracingLines().length > 0, { what: 'the tracing warning' });
    expect(tracingLines()).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(/; requests are served as usual, their spans are dropped$/) as unknown,
      }),
    ]);
  }, 120_000);
});
