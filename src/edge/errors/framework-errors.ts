import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Duplex } from 'node:stream';
import { ApiError } from './api-error.js';
import { ErrorCode } from './error-code.js';
import { REQUEST_ID_HEADER } from '../request-id.js';
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

const CLIENT_ERROR_MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request line or headers are larger than allowed.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request was not received in time.',
};

/**
 * Node's HTTP parser refuses a request whose line or headers are too large or
 * malformed (a control character in a header...) before Fastify sees it, and
 * Fastify's default answer (431 or 400) is not an Error body. Such a request
 * never reached an operation: it is answered 400 `validation_failed`, a status
 * every operation declares.
 */
export function handleClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const message =
      CLIENT_ERROR_MESSAGES[error.code ?? ''] ?? 'The request is not valid HTTP/1.1 (malformed line or header).';
    const body = JSON.stringify(new ApiError(400, ErrorCode.ValidationFailed, message).toBody());
    socket.write(
      'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
