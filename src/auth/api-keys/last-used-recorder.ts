import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { IntervalThrottle } from '../../common/interval-throttle.js';
import { databaseFault } from '../../database/database-faults.js';
import { ApiKeysRepository } from './api-keys.repository.js';

export const LAST_USED_INTERVAL_MS = 60_000;
const FLUSH_DELAY_MS = 1_000;

/** `last_used_at`, off the request path, batched; a failed write (not a fault: Database records those) is logged. */
@Injectable()
export class LastUsedRecorder implements BeforeApplicationShutdown {
  private readonly logger = new Logger('ApiKeyLastUsed');
  private readonly queued = new IntervalThrottle<string>({ intervalMs: LAST_USED_INTERVAL_MS, maxKeys: 10_000 });
  private pending = new Set<string>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly keys: ApiKeysRepository) {}

  record(id: string): void {
    if (!this.queued.admit(id)) return;
    this.pending.add(id);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS).unref();
  }

  async flush(now = Date.now()): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const ids = [...this.pending];
    this.pending = new Set();
    try {
      await this.keys.touch(ids, new Date(now), LAST_USED_INTERVAL_MS);
    } catch (error) {
      if (databaseFault(error)) return;
      this.logger.error(
        `Could not record the last use of API key(s) ${ids.join(', ')}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.flush();
  }
}
