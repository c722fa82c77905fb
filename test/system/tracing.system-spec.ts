import { ensureBuilt } from '../support/built-service.js';
import { callerContext, startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { pollUntil } from '../support/poll.js';
import { type ProductionService, startProductionService } from '../support/production-service.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const KEY = 'tracing-system-key-0123456789abcdef';
const SERVER_KIND = 2;

const traced = (origin: string) => {
  const { traceId, traceparent } = callerContext();
  const headers = { authorization: `Bearer ${KEY}`, traceparent };
  return { traceId, response: fetch(`${origin}/v1/pets`, { headers }) };
};

/** The built service exporting over OTLP/HTTP, as operators run it with a collector. */
describe('tracing to an OTLP/HTTP collector', () => {
  let redis: RedisServer;
  let running: ProductionService | undefined;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    await ensureBuilt();
    redis = await startRedisServer();
  }, 300_000);

  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });

  afterEach(async () => {
    await running?.close();
    running = undefined;
    await receiver.close();
  }, 60_000);

  afterAll(() => redis?.stop(), 60_000);

  const start = async (env: Record<string, string>) => {
    running = await startProductionService({
      API_KEYS: KEY,
      CURSOR_SECRET: 'tracing-system-cursor-secret-0123456789',
      OTEL_BSP_SCHEDULE_DELAY: '20',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      ...env,
    });
    return running.service;
  };

  it('exports in http/protobuf, with a span per Redis command when the rate limits live in Redis', async () => {
    const service = await start({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      REDIS_URL: redis.url,
      RATE_LIMIT_PER_MINUTE: '1000',
      OTEL_SERVICE_NAME: 'animal-store-system-test',
    });
    const { traceId, response } = traced(service.origin);
    expect((await response).status).toBe(200);
    const spans = await receiver.trace(traceId);
    expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/x-protobuf']));
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
  }, 120_000);

  it('exports in http/json; with OTEL_PROPAGATORS=none, starts its own trace whatever traceparent the caller sends', async () => {
    const service = await start({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_PROPAGATORS: 'none' });
    const { traceId, response } = traced(service.origin);
    expect((await response).status).toBe(200);
    const server = await pollUntil(
      () => receiver.spans.find((span) => span.name === 'GET /v1/pets' && span.kind === SERVER_KIND),
      { what: 'the SERVER span' },
    );
    expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/json']));
    expect({ traceId: server.traceId === traceId, parentSpanId: server.parentSpanId }).toEqual({
      traceId: false,
      parentSpanId: '',
    });
    expect(receiver.spans.filter((span) => span.traceId === traceId)).toEqual([]);
  }, 120_000);

  it('serves as usual while the collector hangs: spans are dropped, and the log says so once', async () => {
    receiver.answering = false;
    const service = await start({
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
      service.lines
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
