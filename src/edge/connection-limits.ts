import fp from 'fastify-plugin';
import { validationFailed } from './errors/api-error.js';
import { rawErrorResponse } from './errors/framework-errors.js';

const CONNECT_REFUSED = validationFailed('CONNECT is not supported: the service is not a proxy.');

/** The connection cap; an unknown `Expect` ignored (RFC 9110 §10.1.1), not a bare 417; `CONNECT` a 400 Error. */
export const connectionLimits = fp<{ maxConnections: number }>(
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
