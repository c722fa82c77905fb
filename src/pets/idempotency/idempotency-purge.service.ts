import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { IDEMPOTENCY_RETENTION_HOURS } from './idempotency-keys.repository.js';

/** Deletes keys past their retention once an hour; a failed run is retried at the next one. */
@Injectable()
export class IdempotencyPurgeService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('IdempotencyPurge');
  private timer?: NodeJS.Timeout;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.purge(), 60 * 60 * 1000).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async purge(): Promise<void> {
    try {
      const [, deleted]: [unknown, number] = await this.dataSource.query(
        `DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`,
        [IDEMPOTENCY_RETENTION_HOURS],
      );
      if (deleted > 0)
        this.logger.log(`Deleted ${deleted} idempotency keys older than ${IDEMPOTENCY_RETENTION_HOURS} h`);
    } catch (error) {
      this.logger.warn(`Idempotency key purge failed: ${(error as Error).message}`);
    }
  }
}
