import type { FastifyInstance } from 'fastify';
import type { ShutdownState } from './shutdown-state.js';

/**
 * While the instance drains (after SIGTERM, before its listener closes), every response carries
 * `Connection: close`: Node then closes the connection once the response is sent, so a client or load
 * balancer never has a request in flight on a kept-alive connection when the listener goes.
 */
export function closeConnectionsWhileDraining(fastify: FastifyInstance, shutdown: ShutdownState): void {
  fastify.addHook('onRequest', (_request, reply, done) => {
    if (shutdown.isShuttingDown) reply.header('connection', 'close');
    done();
  });
}
