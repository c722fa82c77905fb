import fp from 'fastify-plugin';
import { Histogram, type Registry } from 'prom-client';

/** Times every answer, those of the hooks before the routes included; the histogram's `_count` counts them. */
export const requestMetrics = fp<{ registry: Registry }>(
  (fastify, { registry }, done) => {
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer each request, by method, route (the route template, "unmatched" when none) and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    // Per method, status and route, the child bound once (prom-client still hashes its labels on each call).
    const bound = new Map<string, Histogram.Internal<string>>();
    fastify.addHook('onResponse', (request, reply, next) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const key = `${request.method} ${reply.statusCode} ${route}`;
      let series = bound.get(key);
      if (!series) {
        series = duration.labels({ method: request.method, route, status: String(reply.statusCode) });
        bound.set(key, series);
      }
      series.observe(reply.elapsedTime / 1000);
      next();
    });
    done();
  },
  { name: 'request-metrics' },
);
