import { Global, Injectable, Module } from '@nestjs/common';
import fp from 'fastify-plugin';

/** Whether the process has been asked to stop; readiness reads it, the signal handler sets it. */
@Injectable()
export class ShutdownState {
  isShuttingDown = false;

  begin(): void {
    this.isShuttingDown = true;
  }
}

@Global()
@Module({ providers: [ShutdownState], exports: [ShutdownState] })
export class ShutdownModule {}

/** While draining, every response closes its connection: none has a request in flight when the listener closes. */
export const closeConnectionsWhileDraining = (shutdown: ShutdownState) =>
  fp((fastify, _options, done) => {
    fastify.addHook('onRequest', (_request, reply, next) => {
      if (shutdown.isShuttingDown) reply.header('connection', 'close');
      next();
    });
    done();
  });
