// Answers where Nest's filter never runs (Fastify's router and hooks, Node's HTTP parser), in the same Error shape.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, validationFailed } from './api-error.js';
import { ErrorCode } from './error-code.js';
import { noteFaultCode } from './fault-codes.js';
import { REQUEST_ID_HEADER } from '../request-id.js';
import { API_RESPONSE_HEADERS, securityHeadersFor } from '../security-headers.js';
import { toApiError } from './to-api-error.js';

/** Fastify's `frameworkErrors`: malformed URLs and over-long parameters, which its default answer echoes. */
export function frameworkErrorHandler(corsOrigins: readonly string[]) {
  const setSecurityHeaders = securityHeadersFor(corsOrigins);
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
    setSecurityHeaders(request, reply, () => sendApiError(reply, toApiError(error)));
}

export function sendApiError(reply: FastifyReply, apiError: ApiError): void {
  noteFaultCode(reply.raw, apiError.getStatus(), apiError.code);
  reply
    .code(apiError.getStatus())
    .headers(apiError.headers)
    .header(REQUEST_ID_HEADER, reply.request.id)
    .type('application/json')
    .send(apiError.toBody());
}

const timedOutSockets = new WeakSet<object>();

export const timedOut = (socket: object | null | undefined): boolean => !!socket && timedOutSockets.has(socket);

const headerLines = (headers: readonly (readonly [string, string])[]) =>
  headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
const HEADER_LINES = headerLines(API_RESPONSE_HEADERS);

/** A whole answer written on the socket, for requests refused before any request object exists. */
export function rawErrorResponse(error: ApiError): string {
  const body = JSON.stringify(error.toBody());
  const status = error.getStatus();
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `${REQUEST_ID_HEADER}: ${randomUUID()}\r\n${HEADER_LINES}${headerLines(Object.entries(error.headers))}\r\n${body}`
  );
}

const TIMEOUT = 'ERR_HTTP_REQUEST_TIMEOUT';
const CLIENT_ERRORS: Partial<Record<string, ApiError>> = {
  [TIMEOUT]: new ApiError(408, ErrorCode.RequestTimeout, 'The request was not received in time.'),
  HPE_HEADER_OVERFLOW: validationFailed('The request line or headers are larger than allowed.'),
};
const MALFORMED = validationFailed('The request is not valid HTTP/1.1 (malformed line or header).');

/** Fastify's `clientErrorHandler`: Node's refusals as 400 (a status every operation declares) or 408, then close. */
export function handleClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (error.code === TIMEOUT) timedOutSockets.add(socket);
  // A request whose answer has begun (a slow client reading it) cannot get a second one: it is only closed.
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent)
    socket.write(rawErrorResponse(CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED));
  socket.destroy();
}
