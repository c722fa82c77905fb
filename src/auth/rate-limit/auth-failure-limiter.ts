// Hand-written: throttler's guard counts every request, this budget only failed authentications (in throttler's storage).
import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { RATE_LIMIT_WINDOW_MS, rateLimitedError } from './rate-limited.error.js';

export const AUTH_FAILURE_THROTTLER = 'auth-failure';
const MAX_BLOCKED_ADDRESSES = 10_000;

/**
 * The per-address budget for failed authentications (AUTH_FAILURE_LIMIT_PER_MINUTE),
 * counted in the rate-limit storage (shared through Redis when configured).
 * Once an address is over it, this instance remembers the block locally, so
 * key guessing from it is refused before any key lookup and without a storage
 * round trip; requests that authenticate never touch the counter.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly limit: number;
  /** Address -> when its block ends (epoch ms). */
  private readonly blocked = new LRUCache<string, number>({ max: MAX_BLOCKED_ADDRESSES, ttl: RATE_LIMIT_WINDOW_MS });

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limit = config.authFailureLimitPerMinute;
  }

  /** Throws the 429 when the address is known to be over its failure budget. */
  assertNotBlocked(address: string): void {
    const until = this.blocked.get(address);
    if (until !== undefined && until > Date.now()) {
      throw rateLimitedError(this.limit, Math.ceil((until - Date.now()) / 1000), 'failed authentications');
    }
  }

  /** Counts one failed authentication; throws the 429 when that exceeds the budget. */
  async recordFailure(address: string): Promise<void> {
    const record = await this.storage.increment(
      address,
      RATE_LIMIT_WINDOW_MS,
      this.limit,
      RATE_LIMIT_WINDOW_MS,
      AUTH_FAILURE_THROTTLER,
    );
    if (record.isBlocked) {
      this.blocked.set(address, Date.now() + record.timeToBlockExpire * 1000);
      throw rateLimitedError(this.limit, record.timeToBlockExpire, 'failed authentications');
    }
  }
}
