import underPressure from '@fastify/under-pressure';
import type { preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { performance } from 'node:perf_hooks';
import type { AppConfig } from '../config/app-config.js';
import { sendApiError } from './errors/framework-errors.js';
import { OVERLOADED } from './errors/to-api-error.js';

/** 503 past `maxInFlight` requests in flight (docs/operating.md); `exempt` decided per route, not per request. */
export const inFlightShedding = fp<{ maxInFlight: number; exempt: readonly string[] }>(
  (fastify, { maxInFlight, exempt }, done) => {
    if (maxInFlight === 0) return done();
    let inFlight = 0;
    const release = () => inFlight--;
    const countInFlight: preHandlerHookHandler = (_request, reply, next) => {
      if (inFlight >= maxInFlight) return sendApiError(reply, OVERLOADED);
      inFlight++;
      // `close` fires once per response: sent, failed or abandoned by the client.
      reply.raw.on('close', release);
      next();
    };
    fastify.addHook('onRoute', (route) => {
      if (!exempt.includes(route.url)) route.preHandler = [countInFlight, ...[route.preHandler ?? []].flat()];
    });
    done();
  },
  { name: 'in-flight-shedding' },
);

// 503 at once past under-pressure's event-loop delay or utilisation; `exempt` routes never shed, nor anything for two
// windows after listening: under-pressure measures from its registration, so those hold the start-up's own work.
export const eventLoopShedding = fp<AppConfig['loadShedding'] & { exempt: readonly string[] }>(
  (fastify, limits, done) => {
    // A window no shorter than the threshold: docs/operating.md, "Load shedding", says why.
    const sampleInterval = Math.max(250, limits.maxEventLoopDelayMs);
    let shedsFrom = Infinity;
    fastify.addHook('onListen', (listening) => {
      shedsFrom = performance.now() + 2 * sampleInterval;
      listening();
    });
    void fastify.register(underPressure, {
      maxEventLoopDelay: limits.maxEventLoopDelayMs,
      maxEventLoopUtilization: limits.maxEventLoopUtilization,
      sampleInterval,
      // Returning nothing lets the request through; both exceptions are checked only under pressure.
      pressureHandler: (request, reply) =>
        performance.now() < shedsFrom || limits.exempt.includes(request.routeOptions.url ?? '')
          ? undefined
          : sendApiError(reply, OVERLOADED),
    });
    done();
  },
  { name: 'event-loop-shedding', dependencies: ['cors'] },
);
