import underPressure from '@fastify/under-pressure';
import fp from 'fastify-plugin';
import { performance } from 'node:perf_hooks';
import type { LoadSheddingConfig } from '../config/app-config.js';
import { sendApiError } from './errors/framework-errors.js';
import { OVERLOADED } from './errors/to-api-error.js';

/**
 * 503 at once past `@fastify/under-pressure`'s event-loop delay or utilisation; `exempt` routes never shed, and nothing
 * does for two windows after the server starts listening: under-pressure measures from its registration, so the first
 * windows hold the start-up's own work (compiling, building the OpenAPI document), which no request caused.
 */
export const eventLoopShedding = fp<LoadSheddingConfig & { exempt: readonly string[] }>(
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
