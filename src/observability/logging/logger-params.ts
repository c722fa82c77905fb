import { createRequire } from 'node:module';
import type { Params } from 'nestjs-pino';
import { destination, stdSerializers } from 'pino';
import type { Options } from 'pino-http';
import type { AppConfig } from '../../config/app-config.js';
import { traceIds } from '../tracing/log-correlation.js';
import { tracingStarted } from '../tracing/tracing-state.js';
import { configuredSecrets, secretScrubber } from '../secret-scrubber.js';

// pino-pretty is required only outside production, so production does not load it (and keep it in memory).
const require = createRequire(import.meta.url);

/**
 * Lines waiting to be written are held up to this size, then new ones are dropped. Under overload the event
 * loop turns slowly and pino's asynchronous stdout writes one 16 KiB chunk per turn, less than the per-request
 * lines it is given: unbounded, that queue grew for as long as the overload lasted (docs/operating.md, "Resilience").
 */
export const LOG_BUFFER_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Lines are written to stdout in batches of at least this size (about a dozen request lines), so that a busy
 * instance makes one write per batch instead of one per request; a quiet one is flushed every
 * LOG_FLUSH_INTERVAL_MS, and pino flushes what is left when the process exits.
 */
export const LOG_WRITE_MIN_BYTES = 4096;
export const LOG_FLUSH_INTERVAL_MS = 1000;

/**
 * nestjs-pino's settings: JSON lines in production, pretty lines otherwise,
 * at LOG_LEVEL. The one line per request is written by RequestLogHook, which
 * knows the route and the caller; the other lines written while serving a
 * request (ApiErrorFilter, DeprecationInterceptor) name its `reqId` themselves.
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
    // With tracing on, every line written inside a request names its trace and span (docs/operating.md, "Tracing").
    ...(tracingStarted() && { mixin: traceIds }),
  };
  // No per-request middleware: nestjs-pino's would give every request a pino-http child logger inside an
  // AsyncLocalStorage context, whose promise hooks then tax every promise of the request (docs/performance.md).
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
