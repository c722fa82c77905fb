// Hand-written: throttler's guard counts every request, this budget only failed authentications (in throttler's storage).
import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import { type AppConfig, RATE_LIMIT_WINDOW_MS } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { ApiError } from '../../edge/errors/api-error.js';
import { clientAddressKey } from './client-address.js';
import { rateLimitedError } from './rate-limited.error.js';

export const AUTH_FAILURE_THROTTLER = 'auth-failure';
/** Blocked addresses one instance remembers; beyond it, the oldest are asked of the storage again. */
export const MAX_BLOCKED_ADDRESSES = 10_000;
const WHAT = 'failed authentications';

/**
 * The per-address budget (AUTH_FAILURE_LIMIT_PER_MINUTE) for credentials presented and refused, counted in the
 * rate-limit storage. A block is also remembered here, so that a wrong credential past the budget gets its 429
 * without a storage round trip, while a valid one from the same address is still served.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly limit: number;
  /** Address key -> when its block ends (epoch ms). */
  private readonly blocked = new LRUCache<string, number>({ max: MAX_BLOCKED_ADDRESSES, ttl: RATE_LIMIT_WINDOW_MS });

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limit = config.authFailureLimitPerMinute;
  }

  isBlocked(ip: string): boolean {
    // The common case on every request: nobody is blocked, and the address is not even keyed.
    if (this.blocked.size === 0) return false;
    const until = this.blocked.get(clientAddressKey(ip));
    return until !== undefined && until > Date.now();
  }

  refusal(ip: string): ApiError {
    const until = this.blocked.get(clientAddressKey(ip)) ?? Date.now();
    return rateLimitedError(this.limit, Math.ceil((until - Date.now()) / 1000), WHAT);
  }

  /** Counts one refused credential; throws the 429 when that exceeds the budget. */
  async recordFailure(ip: string): Promise<void> {
    const record = await this.count(ip);
    if (record.isBlocked) throw rateLimitedError(this.limit, record.timeToBlockExpire, WHAT);
  }

  /** Counts one refused credential answered as it is whatever the budget (an expired or revoked key). */
  async countFailure(ip: string): Promise<void> {
    await this.count(ip);
  }

  private async count(ip: string): ReturnType<ThrottlerStorage['increment']> {
    const address = clientAddressKey(ip);
    const record = await this.storage.increment(
      address,
      RATE_LIMIT_WINDOW_MS,
      this.limit,
      RATE_LIMIT_WINDOW_MS,
      AUTH_FAILURE_THROTTLER,
    );
    if (record.isBlocked) this.blocked.set(address, Date.now() + record.timeToBlockExpire * 1000);
    return record;
  }

  get blockedCount(): number {
    return this.blocked.size;
  }
}
