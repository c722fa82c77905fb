import fp from 'fastify-plugin';
import { PinoLogger } from 'nestjs-pino';
import { Histogram, type Registry } from 'prom-client';
import type { AuthenticatedRequest } from '../auth/api-key-identity.js';

/** Each answer, those of the hooks before the routes included, timed and logged in one line when it is done. */
export const requestOutcome = fp<{ registry: Registry }>(
  (fastify, { registry }, ready) => {
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer each request, by method, route (the route template, "unmatched" when none) and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    // Per method, status and route, the child bound once (prom-client still hashes its labels on each call).
    const bound = new Map<string, Histogram.Internal<string>>();
    // Not pino-http's autoLogging, and on nestjs-pino's root logger: docs/operating.md, "Logs", and development.md.
    const logger = PinoLogger.root.child({ context: 'Request' });
    fastify.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      const route = request.routeOptions.url;
      const key = `${request.method} ${status} ${route}`;
      let series = bound.get(key);
      if (!series) {
        series = duration.labels({ method: request.method, route: route ?? 'unmatched', status: String(status) });
        bound.set(key, series);
      }
      series.observe(reply.elapsedTime / 1000);
      logger[status >= 500 ? 'warn' : 'info'](
        {
          reqId: request.id,
          method: request.method,
          route: route ?? null,
          status,
          durationMs: Math.round(reply.elapsedTime * 100) / 100,
          keyId: (request as AuthenticatedRequest).user?.id ?? null,
        },
        'request completed',
      );
      done();
    });
    ready();
  },
  { name: 'request-outcome' },
);
