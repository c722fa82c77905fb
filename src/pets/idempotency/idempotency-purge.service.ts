import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { IdempotencyKeysRepository, IDEMPOTENCY_RETENTION_HOURS } from './idempotency-keys.repository.js';

const PURGE_EVERY_MS = 60 * 60 * 1000;

/** Deletes keys past their retention once an hour; a failed run is retried at the next one. */
@Injectable()
export class IdempotencyPurgeService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('IdempotencyPurge');
  private timer?: NodeJS.Timeout;

  constructor(private readonly keys: IdempotencyKeysRepository) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.purge(), PURGE_EVERY_MS).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async purge(): Promise<void> {
    try {
      const deleted = await this.keys.purgeExpired();
      if (deleted > 0)
        this.logger.log(`Deleted ${deleted} idempotency keys older than ${IDEMPOTENCY_RETENTION_HOURS} h`);
    } catch (error) {
      this.logger.warn(`Idempotency key purge failed: ${(error as Error).message}`);
    }
  }
}
