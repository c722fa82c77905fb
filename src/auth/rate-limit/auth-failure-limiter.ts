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
/** The most blocked addresses one instance remembers; beyond it, the oldest are asked of the storage again. */
export const MAX_BLOCKED_ADDRESSES = 10_000;
const WHAT = 'failed authentications';

/**
 * The per-address budget for failed authentications (AUTH_FAILURE_LIMIT_PER_MINUTE): credentials that were
 * presented and refused (a wrong API key, a wrong metrics token). Requests without credentials are not counted:
 * they cost no lookup and guess nothing. Counted in the rate-limit storage (shared through Redis when
 * configured), per client address (an IPv6 client per /64, see clientAddressKey). Once an address is over it,
 * this instance remembers the block locally, so that its callers can refuse a wrong credential with 429 before
 * any lookup and without a storage round trip, while a valid one from the same address is still served: the
 * budget limits failures, never the keys of other clients behind the same address.
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

  /** Whether the address is known to be over its budget: a memory lookup, no storage round trip. */
  isBlocked(ip: string): boolean {
    // The common case on every request: nobody is blocked, and the address is not even keyed.
    if (this.blocked.size === 0) return false;
    const until = this.blocked.get(clientAddressKey(ip));
    return until !== undefined && until > Date.now();
  }

  /** The 429 for an address over its budget. */
  refusal(ip: string): ApiError {
    const until = this.blocked.get(clientAddressKey(ip)) ?? Date.now();
    return rateLimitedError(this.limit, Math.ceil((until - Date.now()) / 1000), WHAT);
  }

  /** Counts one refused credential; throws the 429 when that exceeds the budget. */
  async recordFailure(ip: string): Promise<void> {
    const record = await this.count(ip);
    if (record.isBlocked) throw rateLimitedError(this.limit, record.timeToBlockExpire, WHAT);
  }

  /**
   * Counts one refused credential, for a refusal that is answered as it is whatever the budget (an issued key that
   * expired or was revoked): past the budget, the address is blocked for the others all the same.
   */
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

  /** How many addresses this instance remembers as blocked (bounded by MAX_BLOCKED_ADDRESSES). */
  get blockedCount(): number {
    return this.blocked.size;
  }
}
