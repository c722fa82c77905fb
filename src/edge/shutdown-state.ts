import { Global, Inject, Injectable, Logger, Module } from '@nestjs/common';
import type { BeforeApplicationShutdown, OnApplicationShutdown } from '@nestjs/common';
import fp from 'fastify-plugin';
import { constants } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

export const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

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

/** The drain of docs/operating.md, "Shutdown"; in the root module, whose hooks Nest calls before the others'. */
@Injectable()
export class GracefulShutdown implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(GracefulShutdown.name);
  private started = 0;

  constructor(
    private readonly state: ShutdownState,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    if (!signal) return; // app.close(): nothing to drain
    const { shutdownDrainDelayMs: drainMs, shutdownGraceMs: graceMs } = this.config;
    this.started = Date.now();
    // Nest ignores a second signal and sets no deadline: these two exits are ours.
    for (const again of SHUTDOWN_SIGNALS) {
      process.once(again, () => {
        this.logger.warn(`${again} received again: exiting now`);
        process.exit(128 + constants.signals[again]);
      });
    }
    this.logger.log(
      `${signal} received: no longer ready, serving with Connection: close for ${drainMs} ms, then draining requests (grace period ${graceMs} ms)`,
    );
    this.state.begin();
    await sleep(drainMs);
    this.logger.log('Drain delay over: closing the listener');
    setTimeout(() => {
      this.logger.error(`Shutdown still incomplete after ${graceMs} ms: exiting anyway`);
      process.exit(1);
    }, graceMs).unref();
  }

  onApplicationShutdown(signal?: string): void {
    if (signal) this.logger.log(`Stopped in ${Date.now() - this.started} ms`);
  }
}
