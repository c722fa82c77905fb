import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from './api-error.js';
import { ErrorCode } from './error-code.js';
import { REQUEST_ID_HEADER } from '../request-id.js';
import { API_RESPONSE_HEADERS, type SecurityHeaders } from '../security-headers.js';
import { toApiError } from './to-api-error.js';

/**
 * Fastify's router rejects malformed URLs and over-long parameters before any
 * Nest filter runs (and before the onRequest hooks), and its default answer
 * echoes the URL. This handler gives them the same Error body and headers as everything else.
 */
export function frameworkErrorHandler(
  setSecurityHeaders: SecurityHeaders,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    setSecurityHeaders(request, reply);
    sendApiError(reply, toApiError(error));
  };
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

/** Set on a socket whose request ran out of time and was answered 408 by `handleClientError`. */
const TIMED_OUT = Symbol('request timed out');

/** Whether the request's connection was closed by the service because the request took too long to arrive. */
export const timedOut = (socket: object | null | undefined): boolean =>
  (socket as { [TIMED_OUT]?: boolean } | null | undefined)?.[TIMED_OUT] === true;

const HEADER_LINES = API_RESPONSE_HEADERS.map(([name, value]) => `${name}: ${value}\r\n`).join('');

/**
 * A whole answer written on the socket by hand, for requests Node refuses before any request object exists:
 * the same Error body, security headers, `Cache-Control` and a request id as every other answer.
 */
export function rawErrorResponse(error: ApiError): string {
  const body = JSON.stringify(error.toBody());
  const status = error.getStatus();
  const extra = Object.entries(error.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `${REQUEST_ID_HEADER}: ${randomUUID()}\r\n${HEADER_LINES}${extra}\r\n${body}`
  );
}

const TIMEOUT = new ApiError(408, ErrorCode.RequestTimeout, 'The request was not received in time.');
const HEADER_OVERFLOW = new ApiError(
  400,
  ErrorCode.ValidationFailed,
  'The request line or headers are larger than allowed.',
);
const MALFORMED = new ApiError(
  400,
  ErrorCode.ValidationFailed,
  'The request is not valid HTTP/1.1 (malformed line or header).',
);

/**
 * Node's HTTP layer refuses a request whose line or headers are too large or
 * malformed (a control character in a header...), or that does not arrive
 * within the header or request time limit, before Fastify sees it; Fastify's
 * default answer (431, 400 or 408) is not an Error body. Too large or
 * malformed: 400 `validation_failed`, a status every operation declares; too
 * slow: 408 `request_timeout`. The connection is closed either way.
 */
export function handleClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? TIMEOUT
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? HEADER_OVERFLOW
        : MALFORMED;
  if (apiError === TIMEOUT) (socket as { [TIMED_OUT]?: boolean })[TIMED_OUT] = true;
  // A request whose answer has begun (a slow client reading it) cannot get a second one: it is only closed.
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.write(rawErrorResponse(apiError));
  socket.destroy();
}
