import { register } from 'node:module';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { diag, DiagLogLevel, SpanStatusCode, type Span } from '@opentelemetry/api';
import { setGlobalErrorHandler } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import * as semconv from '@opentelemetry/semantic-conventions';
import { PACKAGE_ROOT } from '../../config/package-root.js';
import { faultCodeOf } from '../../edge/errors/fault-codes.js';
import { OPERATIONS_ROUTES } from '../operations-routes.js';
import { redactingSpanExporter } from './redacting-span-exporter.js';
import { markTracingStarted, scrubForExport } from './tracing-state.js';
import { throttledReport } from './throttled-report.js';

/** Probes and scrapes, one every few seconds per instance, would drown the traces. */
const UNTRACED_PATHS = new Set(Object.values(OPERATIONS_ROUTES).map((route) => `/${route}`));
/** Without the query string, which may carry a credential (`?access_token=…`, RFC 6750 §2.3). */
const pathOf = (url: string | undefined) => url?.split('?', 1)[0] ?? '';
const untraced = (url: string | undefined) => UNTRACED_PATHS.has(pathOf(url));

/** A 5xx's SERVER span is an error, named by the code its answer noted (the filter's, or `sendApiError`'s). */
function markFault(span: Span, _request: unknown, response: unknown): void {
  const code = faultCodeOf(response as object);
  if (code === undefined) return;
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  span.setAttribute(semconv.ATTR_ERROR_TYPE, code);
}

/** The SDK's own warnings and errors (export failures, a full queue) through the service's log. */
function reportProblems(): void {
  const report = throttledReport(
    (message) =>
      void import('@nestjs/common').then(({ Logger }) =>
        new Logger('Tracing').warn(`${message}; requests are served as usual, their spans are dropped`),
      ),
    60_000,
  );
  setGlobalErrorHandler((error) =>
    report(
      `Trace export failed: ${typeof error === 'string' ? error : (error.message ?? error.name ?? 'unknown error')}`,
    ),
  );
  // OTEL_LOG_LEVEL, when set, keeps the SDK's own console logger (for debugging the exporter).
  if (process.env.OTEL_LOG_LEVEL) return;
  const warn = (message: string) => report(`OpenTelemetry: ${message}`);
  const quiet = () => undefined;
  diag.setLogger(
    { error: warn, warn, info: quiet, debug: quiet, verbose: quiet },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}

/** The OTLP exporter the protocol variables name, as the SDK picks it (it has no seam to wrap its own choice). */
function otlpExporter(): SpanExporter {
  const protocol =
    process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ||
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() ||
    'http/protobuf';
  if (protocol === 'http/json') return new JsonTraceExporter();
  if (protocol === 'grpc') return new GrpcTraceExporter();
  if (protocol !== 'http/protobuf') diag.warn(`Unsupported OTLP traces protocol: ${protocol}. Using http/protobuf.`);
  return new ProtobufTraceExporter();
}

/** The OpenTelemetry SDK, configured by the standard OTEL_* variables (docs/operating.md, "Tracing"). */
export async function startTracing(): Promise<void> {
  // import-in-the-middle's loader hook, limited to the modules the instrumentations ask for.
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
  reportProblems();
  const sdk = new NodeSDK({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) override these.
    resource: defaultResource().merge(
      resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: 'animal-store', [semconv.ATTR_SERVICE_VERSION]: version }),
    ),
    // Traces only: metrics are Prometheus' (/metrics), logs go to stdout.
    metricReaders: [],
    logRecordProcessors: [],
    traceExporter: redactingSpanExporter(otlpExporter(), scrubForExport),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request: IncomingMessage) => untraced(request.url),
        // Never the query string: this hook's attributes replace the computed ones.
        startIncomingSpanHook: () => ({ [semconv.ATTR_URL_QUERY]: undefined }),
        applyCustomAttributesOnSpan: markFault,
      }),
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        ignorePaths: ({ url }) => untraced(url),
        // Its url.path is the request's URL, query string included.
        requestHook: (span, request) => span.setAttribute(semconv.ATTR_URL_PATH, pathOf(request.url)),
        // Fastify's hooks (ours and plugins') would add a span each.
        instrumentHooks: false,
      }),
      // Statement text only, with its $1 placeholders: parameter values are never recorded.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      // The command name only: rate-limit keys are derived from callers' keys and addresses.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  // A collector that is down must not hold the shutdown up.
  markTracingStarted(() =>
    Promise.race([sdk.shutdown(), new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref())]),
  );
  await waitForAllMessagesAcknowledged();
}
