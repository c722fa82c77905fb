import { createRequire } from 'node:module';
import { trace } from '@opentelemetry/api';
import type { Params } from 'nestjs-pino';
import { destination, stdSerializers } from 'pino';
import type { Options } from 'pino-http';
import type { AppConfig } from '../../config/app-config.js';
import { tracingStarted } from '../tracing/tracing-state.js';
import { configuredSecrets, secretScrubber } from '../secret-scrubber.js';

// pino-pretty is required only outside production, so production does not load it.
const require = createRequire(import.meta.url);

/** Lines waiting to be written are held up to this size, then dropped (docs/operating.md, "Resilience"). */
export const LOG_BUFFER_MAX_BYTES = 4 * 1024 * 1024;
/** Lines reach stdout in batches of at least this size, or every LOG_FLUSH_INTERVAL_MS (docs/operating.md, "Logs"). */
export const LOG_WRITE_MIN_BYTES = 4096;
const LOG_FLUSH_INTERVAL_MS = 1000;

/** A pino `mixin`: the trace and span ids of the span active when a line is written (inside a request). */
function traceIds(): { trace_id?: string; span_id?: string } {
  const { traceId, spanId } = trace.getActiveSpan()?.spanContext() ?? {};
  return traceId === undefined ? {} : { trace_id: traceId, span_id: spanId };
}

/**
 * nestjs-pino's settings: JSON lines in production, pretty lines otherwise, at LOG_LEVEL. The one line per request
 * is `requestOutcome`'s (request-outcome.ts); the other lines written while serving a request name its `reqId`
 * themselves.
 */
export function loggerParams(config: Pick<AppConfig, 'logLevel' | 'production' | 'apiKeys' | 'metricsToken'>): Params {
  const options: Options = {
    level: config.logLevel,
    autoLogging: false,
    quietReqLogger: true,
    // No request serialization at all: headers (Authorization among them) never reach a log.
    wrapSerializers: false,
    serializers: { req: () => undefined, res: () => undefined, err: stdSerializers.err },
    hooks: { streamWrite: secretScrubber(configuredSecrets(config)) },
    ...(tracingStarted() && { mixin: traceIds }),
  };
  // No per-request middleware, whose AsyncLocalStorage taxes every promise (docs/performance.md).
  const forRoutes: Params['forRoutes'] = [];
  if (config.logLevel === 'silent') return { pinoHttp: options, forRoutes };
  if (config.production) {
    const stdout = destination({
      dest: 1,
      sync: false,
      minLength: LOG_WRITE_MIN_BYTES,
      maxLength: LOG_BUFFER_MAX_BYTES,
    });
    setInterval(() => stdout.flush(), LOG_FLUSH_INTERVAL_MS).unref();
    return { pinoHttp: [options, stdout], forRoutes };
  }
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return { pinoHttp: [options, pretty({ colorize: process.stdout.isTTY, sync: true })], forRoutes };
}
