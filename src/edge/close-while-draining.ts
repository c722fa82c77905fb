import fp from 'fastify-plugin';
import type { ShutdownState } from './shutdown-state.js';

/** While draining, every response closes its connection: none has a request in flight when the listener closes. */
export const closeWhileDraining = fp<{ shutdown: ShutdownState }>(
  (fastify, { shutdown }, done) => {
    fastify.addHook('onRequest', (_request, reply, next) => {
      if (shutdown.isShuttingDown) reply.header('connection', 'close');
      next();
    });
    done();
  },
  { name: 'close-while-draining' },
);
