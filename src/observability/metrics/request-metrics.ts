import fp from 'fastify-plugin';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Counts and times every answer, those of the hooks before the routes included. */
export const requestMetrics = fp<{ registry: Registry }>(
  (fastify, { registry }, done) => {
    const labelled = { labelNames: ['method', 'route', 'status'], registers: [registry] };
    const requests = new Counter({
      ...labelled,
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route (the route template, "unmatched" when none) and status.',
    });
    const duration = new Histogram({
      ...labelled,
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to finishing its response, by method, route and status.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    });
    // Per method, status and route, the children bound once (prom-client still hashes their labels on each call).
    const bound = new Map<string, { requests: Counter.Internal; duration: Histogram.Internal<string> }>();
    fastify.addHook('onResponse', (request, reply, next) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const key = `${request.method} ${reply.statusCode} ${route}`;
      let series = bound.get(key);
      if (!series) {
        const labels = { method: request.method, route, status: String(reply.statusCode) };
        series = { requests: requests.labels(labels), duration: duration.labels(labels) };
        bound.set(key, series);
      }
      series.requests.inc();
      series.duration.observe(reply.elapsedTime / 1000);
      next();
    });
    done();
  },
  { name: 'request-metrics' },
);
