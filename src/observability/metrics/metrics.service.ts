import { Injectable } from '@nestjs/common';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** The application's own Prometheus registry (several apps in one test process never clash). */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  private readonly duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer each request, by method, route (the route template, "unmatched" when none) and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  // Per method, status and route, the children bound once (prom-client still hashes their labels on each call).
  private readonly series = new Map<string, Histogram.Internal<string>>();

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
        series = this.duration.labels({ method: request.method, route, status: String(reply.statusCode) });
        this.series.set(key, series);
      }
      series.observe(reply.elapsedTime / 1000);
      done();
    });
    ready();
  });
}
