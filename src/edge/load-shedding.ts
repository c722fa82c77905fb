import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, preHandlerHookHandler, RouteOptions } from 'fastify';
import type { LoadSheddingConfig } from '../config/app-config.js';
import { sendApiError } from './errors/framework-errors.js';
import { serviceUnavailable } from './errors/to-api-error.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** under-pressure reads a route's own handler here; its types do not declare it. */
    pressureHandler?: () => undefined;
  }
}

// under-pressure averages the event-loop delay over this window; shorter reacts before a backlog builds up.
const SAMPLE_INTERVAL_MS = 250;

/**
 * under-pressure counts a window with no delay sample at all (one turn of the loop outlasted the window) as an
 * infinite delay. A window at least as long as the threshold makes that mean what the threshold says: with 250 ms
 * and a 1 s threshold, a single 300 ms turn (a burst of cheap requests on a busy machine) shed every request.
 */
const sampleIntervalFor = (maxEventLoopDelayMs: number) => Math.max(SAMPLE_INTERVAL_MS, maxEventLoopDelayMs);

/** under-pressure's per-route handler: returning nothing lets the request through whatever the pressure. */
const neverShed = () => undefined;

/** `preHandler` may be absent, one function or a list on a route; the in-flight check is added to it. */
function withPreHandler(route: RouteOptions, hook: preHandlerHookHandler): preHandlerHookHandler[] {
  const existing = route.preHandler;
  if (existing === undefined) return [hook];
  return Array.isArray(existing) ? [hook, ...existing] : [hook, existing];
}

/**
 * Past a threshold, requests are refused at once with 503 + Retry-After (the
 * same Error body as everywhere) instead of queueing behind the ones already
 * in progress. Two signals: the requests in flight (they wait for one of the
 * few database connections, so this is the queue's length) and, through
 * `@fastify/under-pressure`, the event loop's delay and utilisation. 0 turns one off.
 *
 * A request counts as in flight from `preHandler` on, once its body has arrived: a client that opens a socket
 * and trickles its body holds a connection (bounded by the connection cap and the request timeout), never a
 * slot that a complete request needs. `exempt` routes (the probes and `/metrics`, which answer from memory)
 * are never shed, so an overloaded instance still reports itself alive instead of being restarted.
 */
export function registerLoadShedding(
  fastify: FastifyInstance,
  limits: LoadSheddingConfig,
  exempt: readonly string[],
): void {
  // Built once: under overload every refused request would otherwise allocate an error and capture its stack.
  const overloaded = serviceUnavailable();
  const exemptUrls = new Set(exempt);
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
  // Decided once per route when it is registered, so that a request pays for no exemption check.
  fastify.addHook('onRoute', (route) => {
    if (exemptUrls.has(route.url)) {
      route.config = { ...route.config, pressureHandler: neverShed };
    } else if (countInFlight) {
      route.preHandler = withPreHandler(route, countInFlight);
    }
  });
  void fastify.register(underPressure, {
    maxEventLoopDelay: limits.maxEventLoopDelayMs,
    maxEventLoopUtilization: limits.maxEventLoopUtilization,
    sampleInterval: sampleIntervalFor(limits.maxEventLoopDelayMs),
    pressureHandler: (_request, reply) => sendApiError(reply, overloaded),
  });
}
