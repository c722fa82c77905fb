import type { preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
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
