import { tracingRequested } from './tracing-state.js';

/**
 * `node --import ./dist/src/observability/tracing/preload.js dist/src/main.js`: the OpenTelemetry SDK has to start
 * before the modules it instruments load (pg, ioredis, node:http), which for ES modules only a preload can do.
 * Without an OTLP endpoint nothing else is loaded: no SDK, no loader hook, no per-request work.
 */
if (tracingRequested(process.env)) await (await import('./start-tracing.js')).startTracing();
