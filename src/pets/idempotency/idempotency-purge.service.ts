import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Counter, Gauge, Registry } from 'prom-client';
import { Database } from '../../database/database.js';
import { IDEMPOTENCY_RETENTION_HOURS, IdempotencyKeysRepository } from './idempotency-keys.repository.js';

const PURGE_EVERY_MS = 60 * 60_000;
/** Soon after start, so that an instance restarted more often than hourly still purges. */
const FIRST_PURGE_AFTER_MS = 60_000;
/** Rows per DELETE: each statement stays far below the role's statement timeout however large the backlog. */
export const PURGE_BATCH_ROWS = 5_000;

/** Deletes expired keys in batches, a minute after start, then hourly; a failed run is logged, counted, retried. */
@Injectable()
export class IdempotencyPurgeService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('IdempotencyPurge');
  private readonly failures: Counter;
  private timer?: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  /** Epoch ms; Infinity: no key is stored (or not read yet). */
  private oldest = Infinity;

  constructor(
    private readonly database: Database,
    private readonly keys: IdempotencyKeysRepository,
    registry: Registry,
  ) {
    this.failures = new Counter({
      name: 'animal_store_idempotency_purge_failures_total',
      help: 'Purges of expired Idempotency-Keys that failed (logged with their cause); retried at the next hourly run.',
      registers: [registry],
    });
    const gauge: Gauge = new Gauge({
      name: 'animal_store_idempotency_oldest_key_age_seconds',
      help: `Age of the oldest stored Idempotency-Key (read after each purge; 0: none). Above ${IDEMPOTENCY_RETENTION_HOURS} h plus an hour, the purge is not keeping up.`,
      registers: [registry],
      collect: () => gauge.set(Math.max(0, (Date.now() - this.oldest) / 1000)),
    });
  }

  onApplicationBootstrap(): void {
    this.timer = setTimeout(() => {
      void this.purge();
      this.timer = setInterval(() => void this.purge(), PURGE_EVERY_MS).unref();
    }, FIRST_PURGE_AFTER_MS).unref();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
  }

  /** One run; a call while one is running waits for it. */
  purge(): Promise<void> {
    this.running ??= this.run().finally(() => (this.running = null));
    return this.running;
  }

  private async run(): Promise<void> {
    let deleted = 0;
    try {
      let batch: number;
      do {
        batch = await this.keys.deleteExpired(this.database, PURGE_BATCH_ROWS);
        deleted += batch;
      } while (batch === PURGE_BATCH_ROWS);
      if (deleted > 0)
        this.logger.log(`Deleted ${deleted} idempotency keys older than ${IDEMPOTENCY_RETENTION_HOURS} h`);
    } catch (error) {
      this.failures.inc();
      this.logger.warn(
        `Idempotency key purge failed after deleting ${deleted} keys: ${(error as Error).message}. It runs again within the hour; if animal_store_idempotency_purge_failures_total keeps rising, see docs/operating.md ("Metrics").`,
      );
    }
    await this.keys.oldestCreatedAt(this.database).then(
      (oldest) => (this.oldest = oldest?.getTime() ?? Infinity),
      // The gauge keeps its last reading; the database's faults have their own metrics.
      () => undefined,
    );
  }
}
