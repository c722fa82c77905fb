import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from './api-error.js';
import { ErrorCode } from './error-code.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { toApiError } from './to-api-error.js';

/**
 * Fastify's router rejects malformed URLs and over-long parameters before any
 * Nest filter runs, and its default answer echoes the URL. This handler gives
 * them the same Error body as everything else.
 */
export function handleFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  sendApiError(reply, toApiError(error));
}

/** Answers from a Fastify hook or handler, where Nest's filter does not run. */
export function sendApiError(reply: FastifyReply, apiError: ApiError): void {
  reply
    .code(apiError.getStatus())
    .headers(apiError.headers)
    .header(REQUEST_ID_HEADER, reply.request.id)
    .type('application/json')
    .send(apiError.toBody());
}

const clientErrors: Record<string, () => ApiError> = {
  ERR_HTTP_REQUEST_TIMEOUT: () => new ApiError(408, ErrorCode.ValidationFailed, 'The request was not received in time.'),
  HPE_HEADER_OVERFLOW: () => new ApiError(431, ErrorCode.PayloadTooLarge, 'The request headers are too large.'),
};

/**
 * Requests Node's HTTP parser rejects (control characters in a header, a
 * malformed request line...) never reach Fastify's routing; Fastify's default
 * answer has its own body shape. This one writes the same Error as everything else.
 */
export function handleClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError =
    clientErrors[error.code ?? '']?.() ??
    new ApiError(400, ErrorCode.ValidationFailed, 'The request is not valid HTTP/1.1 (malformed line or header).');
  const body = JSON.stringify(apiError.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${apiError.getStatus()} ${STATUS_CODES[apiError.getStatus()]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
