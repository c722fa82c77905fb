import { Injectable } from '@nestjs/common';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** The application's own Prometheus registry (several apps in one test process never clash). */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route (the route template, "unmatched" when none) and status.',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });

  private readonly duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its response, by method, route and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  // Per method, status and route, the children bound once (prom-client still hashes their labels on each call).
  private readonly series = new Map<string, { requests: Counter.Internal; duration: Histogram.Internal<string> }>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Counts and times every answer, those of the hooks before the routes included. */
  readonly requestMetrics = fp((fastify, _options, ready) => {
    fastify.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const key = `${request.method} ${reply.statusCode} ${route}`;
      let series = this.series.get(key);
      if (!series) {
        const labels = { method: request.method, route, status: String(reply.statusCode) };
        series = { requests: this.requests.labels(labels), duration: this.duration.labels(labels) };
        this.series.set(key, series);
      }
      series.requests.inc();
      series.duration.observe(reply.elapsedTime / 1000);
      done();
    });
    ready();
  });
}
