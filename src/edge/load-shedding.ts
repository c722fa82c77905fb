import underPressure from '@fastify/under-pressure';
import type { preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { LoadSheddingConfig } from '../config/app-config.js';
import { sendApiError } from './errors/framework-errors.js';
import { serviceUnavailable } from './errors/to-api-error.js';

/**
 * 503 at once past a threshold (docs/operating.md, "Load shedding"): requests in flight from `preHandler` on, and
 * `@fastify/under-pressure`'s event-loop delay and utilisation. `exempt` routes are never shed. Two plugins: `perRoute`
 * must see every route, `onEventLoop` is an `onRequest` hook.
 */
export function loadShedding(limits: LoadSheddingConfig, exempt: readonly string[]) {
  // Built once: under overload every refused request would otherwise allocate an error and capture its stack.
  const overloaded = serviceUnavailable();
  let countInFlight: preHandlerHookHandler | undefined;
  if (limits.maxInFlight > 0) {
    let inFlight = 0;
    const release = () => inFlight--;
    countInFlight = (_request, reply, done) => {
      if (inFlight >= limits.maxInFlight) return sendApiError(reply, overloaded);
      inFlight++;
      // `close` fires once per response: sent, failed or abandoned by the client.
      reply.raw.on('close', release);
      done();
    };
  }
  // Decided once per route, so that a request pays for no exemption check.
  const perRoute = fp((fastify, _options, done) => {
    fastify.addHook('onRoute', (route) => {
      if (exempt.includes(route.url)) {
        // under-pressure's per-route handler (undeclared in its types): returning nothing lets the request through.
        route.config = { ...route.config, pressureHandler: () => undefined } as typeof route.config;
      } else if (countInFlight) {
        const existing = route.preHandler ?? [];
        route.preHandler = [countInFlight, ...(Array.isArray(existing) ? existing : [existing])];
      }
    });
    done();
  });
  const onEventLoop = fp((fastify, _options, done) => {
    void fastify.register(underPressure, {
      maxEventLoopDelay: limits.maxEventLoopDelayMs,
      maxEventLoopUtilization: limits.maxEventLoopUtilization,
      // A window with no sample counts as an infinite delay: one no shorter than the threshold makes that mean what
      // the threshold says (a single 300 ms turn shed everything with 250 ms and a 1 s threshold).
      sampleInterval: Math.max(250, limits.maxEventLoopDelayMs),
      pressureHandler: (_request, reply) => sendApiError(reply, overloaded),
    });
    done();
  });
  return { perRoute, onEventLoop };
}
