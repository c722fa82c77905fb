import underPressure from '@fastify/under-pressure';
import fp from 'fastify-plugin';
import type { LoadSheddingConfig } from '../config/app-config.js';
import { sendApiError } from './errors/framework-errors.js';
import { OVERLOADED } from './errors/to-api-error.js';

/** 503 at once past `@fastify/under-pressure`'s event-loop delay or utilisation; `exempt` routes never shed. */
export const eventLoopShedding = fp<LoadSheddingConfig & { exempt: readonly string[] }>(
  (fastify, limits, done) => {
    void fastify.register(underPressure, {
      maxEventLoopDelay: limits.maxEventLoopDelayMs,
      maxEventLoopUtilization: limits.maxEventLoopUtilization,
      // A window no shorter than the threshold: docs/operating.md, "Load shedding", says why.
      sampleInterval: Math.max(250, limits.maxEventLoopDelayMs),
      // Returning nothing lets the request through; the exemption is checked only under pressure.
      pressureHandler: (request, reply) =>
        limits.exempt.includes(request.routeOptions.url ?? '') ? undefined : sendApiError(reply, OVERLOADED),
    });
    done();
  },
  { name: 'event-loop-shedding', dependencies: ['cors'] },
);
