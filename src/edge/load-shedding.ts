import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import type { LoadSheddingConfig } from '../config/app-config.js';
import { sendApiError } from './errors/framework-errors.js';
import { serviceUnavailable } from './errors/to-api-error.js';

// under-pressure averages the event-loop delay over this window; shorter reacts before a backlog builds up.
const SAMPLE_INTERVAL_MS = 250;

/**
 * Past a threshold, requests are refused at once with 503 + Retry-After (the
 * same Error body as everywhere) instead of queueing behind the ones already
 * in progress. Two signals: the requests in flight (they wait for one of the
 * few database connections, so this is the queue's length) and, through
 * `@fastify/under-pressure`, the event loop's delay and utilisation. 0 turns one off.
 */
export function registerLoadShedding(fastify: FastifyInstance, limits: LoadSheddingConfig): void {
  // Built once: under overload every refused request would otherwise allocate an error and capture its stack.
  const overloaded = serviceUnavailable();
  if (limits.maxInFlight > 0) {
    let inFlight = 0;
    const release = () => inFlight--;
    fastify.addHook('onRequest', (_request, reply, done) => {
      if (inFlight >= limits.maxInFlight) return sendApiError(reply, overloaded);
      inFlight++;
      // `close` fires once per response: sent, failed or abandoned by the client.
      reply.raw.on('close', release);
      done();
    });
  }
  void fastify.register(underPressure, {
    maxEventLoopDelay: limits.maxEventLoopDelayMs,
    maxEventLoopUtilization: limits.maxEventLoopUtilization,
    sampleInterval: SAMPLE_INTERVAL_MS,
    pressureHandler: (_request, reply) => sendApiError(reply, overloaded),
  });
}
