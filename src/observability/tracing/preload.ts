/**
 * `node --import ./dist/src/observability/tracing/preload.js dist/src/main.js`: the OpenTelemetry SDK has to start
 * before the modules it instruments load (pg, ioredis, node:http), which for ES modules only a preload can do.
 * Without an OTLP endpoint, or with OTEL_SDK_DISABLED, nothing else is loaded: no SDK, no loader hook.
 */
const endpoint = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
if (endpoint && process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true') {
  await (await import('./start-tracing.js')).startTracing();
}
