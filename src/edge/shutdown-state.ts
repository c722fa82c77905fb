import { Global, Injectable, Module } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';

/** Whether the process has been asked to stop; readiness reads it, the signal handler sets it. */
@Injectable()
export class ShutdownState {
  isShuttingDown = false;

  begin(): void {
    this.isShuttingDown = true;
  }
}

/** The application's one ShutdownState, for every module that reads it. */
@Global()
@Module({ providers: [ShutdownState], exports: [ShutdownState] })
export class ShutdownModule {}

/** While draining, every response closes its connection: none has a request in flight when the listener closes. */
export function closeConnectionsWhileDraining(fastify: FastifyInstance, shutdown: ShutdownState): void {
  fastify.addHook('onRequest', (_request, reply, done) => {
    if (shutdown.isShuttingDown) reply.header('connection', 'close');
    done();
  });
}
