import fp from 'fastify-plugin';
import type { EdgeLimitsConfig } from '../config/app-config.js';
import { validationFailed } from './errors/api-error.js';
import { rawErrorResponse } from './errors/framework-errors.js';

/** Node's HTTP server's bounds on a client (docs/operating.md, "Timeouts and connections"), as Fastify options. */
export function serverOptions(limits: EdgeLimitsConfig) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      // Node's default, 30 s, would let a slow request run up to 30 s past its limit.
      connectionsCheckingInterval: 500,
      // The edge's header check answers a request without `Host` in the Error shape.
      requireHostHeader: false,
    },
  };
}

const CONNECT_REFUSED = validationFailed('CONNECT is not supported: the service is not a proxy.');

/** The connection cap; an unknown `Expect` ignored (RFC 9110 §10.1.1), not a bare 417; `CONNECT` a 400 Error. */
export const connectionLimits = fp<EdgeLimitsConfig>(
  (fastify, { maxConnections }, done) => {
    fastify.server.maxConnections = maxConnections;
    fastify.server.on('checkExpectation', (request, response) => fastify.routing(request, response));
    fastify.server.on('connect', (_request, socket) => {
      socket.on('error', () => undefined);
      socket.end(rawErrorResponse(CONNECT_REFUSED));
    });
    done();
  },
  { name: 'connection-limits' },
);
