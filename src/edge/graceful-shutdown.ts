import type { INestApplication, LoggerService } from '@nestjs/common';
import { constants } from 'node:os';
import { ShutdownState } from './shutdown-state.js';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

interface GracefulShutdownOptions {
  drainDelayMs: number;
  graceMs: number;
  afterClose?: () => Promise<void>;
  logger: LoggerService;
}

/**
 * On SIGTERM or SIGINT: not ready at once, serving on with `Connection: close` for the drain delay so that load
 * balancers take the instance out, then the listener closes, the application closes, `afterClose`, exit 0. Past the
 * grace period (from the listener's close), or on a second signal, the process exits at once with a non-zero code.
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
