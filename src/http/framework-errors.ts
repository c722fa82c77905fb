import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { toApiError } from './to-api-error.js';

/**
 * Fastify's router rejects malformed URLs and over-long parameters before any
 * Nest filter runs, and its default answer echoes the URL. This handler gives
 * them the same Error body as everything else.
 */
export function handleFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error);
  reply.code(apiError.getStatus()).headers(apiError.headers).type('application/json').send(apiError.toBody());
}
