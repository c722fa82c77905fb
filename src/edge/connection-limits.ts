import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { EdgeLimitsConfig } from '../config/app-config.js';
import { ApiError } from './errors/api-error.js';
import { ErrorCode } from './errors/error-code.js';
import { rawErrorResponse } from './errors/framework-errors.js';

/**
 * Node's HTTP server's bounds on a client, as Fastify options (docs/operating.md, "Timeouts and connections"). The
 * time limits are checked every 500 ms (Node's default, 30 s, would let a slow request run 30 s past its limit).
 * A request without `Host` is left to the edge's header check, which answers it in the Error shape.
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
      connectionsCheckingInterval: 500,
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
 * What Node would otherwise decide on its own: at most `maxConnections` open connections (past it, a new one is
 * closed unread); an `Expect` other than `100-continue` is ignored (RFC 9110 §10.1.1) rather than answered a bare
 * 417; `CONNECT` gets a 400 Error rather than a closed connection.
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
