import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EdgeLimitsConfig } from '../config/app-config.js';
import { ApiError } from './errors/api-error.js';
import { ErrorCode } from './errors/error-code.js';
import { rawErrorResponse } from './errors/framework-errors.js';

/**
 * How often Node compares the open connections with the header and request time limits: a slow request is
 * answered 408 within this much of its limit (Node's default, 30 s, would let it run up to 30 s longer).
 */
const TIMEOUT_CHECK_INTERVAL_MS = 500;

/**
 * The Node HTTP server's bounds on a client, as Fastify options:
 * - the request's headers must arrive within `headersTimeoutMs` and the whole request (body included) within
 *   `requestTimeoutMs` of its first byte; past either, Node raises ERR_HTTP_REQUEST_TIMEOUT, which
 *   `handleClientError` answers 408 before closing the connection. A slow client costs one socket for a bounded
 *   time and never holds a worker: the body is read by the event loop as it arrives.
 * - an idle kept-alive connection is closed after `keepAliveTimeoutMs` (above the load balancer's own idle
 *   timeout, so that the balancer, not the service, closes idle connections and never sends on a closing one).
 * - Node does not answer a request without `Host` itself (a bare 400 with no body): the edge's header check does.
 */
export function serverOptions(
  limits: EdgeLimitsConfig,
): Pick<FastifyServerOptions, 'requestTimeout' | 'keepAliveTimeout'> & { http: ServerOptions } {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      requireHostHeader: false,
    },
  };
}

const CONNECT_REFUSED = new ApiError(
  400,
  ErrorCode.ValidationFailed,
  'CONNECT is not supported: the service is not a proxy.',
);

/**
 * What Node would otherwise decide on its own, on the server under Fastify:
 * - at most `maxConnections` open connections; past it Node closes a new connection at once, before reading
 *   anything from it (the client sees the connection closed or reset, with no answer: answering would mean
 *   reading its request, which is what the cap saves). The instance's other connections are unaffected.
 * - an `Expect` other than `100-continue`: Node would answer a bare 417; the request is served as if the
 *   expectation were absent (RFC 9110 §10.1.1 lets a server ignore one it does not understand).
 * - `CONNECT`: Node would close the connection without an answer; it gets a 400 Error.
 */
export function applyConnectionLimits(fastify: FastifyInstance, limits: EdgeLimitsConfig): void {
  const server = fastify.server;
  server.maxConnections = limits.maxConnections;
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    fastify.routing(request, response),
  );
  server.on('connect', (_request: unknown, socket: Duplex) => {
    socket.on('error', () => undefined);
    socket.end(rawErrorResponse(CONNECT_REFUSED));
  });
}
