import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from './request-id.js';
import { toApiError } from './to-api-error.js';

/**
 * Fastify's router rejects malformed URLs and over-long parameters before any
 * Nest filter runs, and its default answer echoes the URL. This handler gives
 * them the same Error body as everything else.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error);
  reply
    .code(apiError.getStatus())
    .headers(apiError.headers)
    .header(REQUEST_ID_HEADER, request.id)
    .type('application/json')
    .send(apiError.toBody());
}
