import type { FastifyUnderPressureOptions } from '@fastify/under-pressure';
import type { LoadSheddingConfig } from '../config/app-config.js';
import { sendApiError } from './framework-errors.js';
import { serviceUnavailable } from './to-api-error.js';

const SAMPLE_INTERVAL_MS = 250;

/**
 * `@fastify/under-pressure` options: past a threshold, requests are refused
 * at once with 503 + Retry-After (the same Error body as everywhere) instead
 * of queueing behind the ones already in progress. A threshold of 0 is off.
 */
export function loadSheddingOptions(limits: LoadSheddingConfig): FastifyUnderPressureOptions {
  return {
    maxEventLoopDelay: limits.maxEventLoopDelayMs,
    maxEventLoopUtilization: limits.maxEventLoopUtilization,
    // under-pressure averages over this window; shorter reacts to a spike before the queue builds up.
    sampleInterval: SAMPLE_INTERVAL_MS,
    pressureHandler: (_request, reply) => sendApiError(reply, serviceUnavailable()),
  };
}
