import type { INestApplication, LoggerService } from '@nestjs/common';
import { constants } from 'node:os';
import { ShutdownState } from './shutdown-state.js';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface GracefulShutdownOptions {
  /** How long the instance keeps serving, not ready and with `Connection: close`, before its listener closes. */
  drainDelayMs: number;
  /** Once the listener closes: how long in-flight requests (and the rest of the teardown) may take before the process exits anyway. */
  graceMs: number;
  /** Runs once the application is closed (HTTP drained, database pool closed): e.g. stop the embedded PostgreSQL. */
  afterClose?: () => Promise<void>;
  logger: LoggerService;
}

/**
 * On SIGTERM or SIGINT: readiness turns 503 at once while the instance keeps
 * serving for the drain delay, every response with `Connection: close`, so
 * load balancers see the 503 and take it out (a refused connection would
 * reset the requests they still send). Then the listener closes, in-flight
 * requests finish, idle connections close, the database pool closes, then
 * `afterClose`, then exit 0. Past the grace period (counted from the end of
 * the drain delay), or on a second signal, the process exits at once with a
 * non-zero code.
 */
export function stopGracefullyOnSignals(app: INestApplication, options: GracefulShutdownOptions): void {
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
  const { drainDelayMs, graceMs, afterClose, logger } = options;
  const started = Date.now();
  logger.log(
    `${signal} received: no longer ready, serving with Connection: close for ${drainDelayMs} ms, then draining requests (grace period ${graceMs} ms)`,
  );
  app.get(ShutdownState).begin();
  if (drainDelayMs > 0) await new Promise((wake) => setTimeout(wake, drainDelayMs));
  logger.log('Drain delay over: closing the listener');
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
