// Hand-written: throttler's guard counts every request, this budget only failed authentications (in throttler's storage).
import { Inject, Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import { type AppConfig, RATE_LIMIT_WINDOW_MS } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { ApiError } from '../../edge/errors/api-error.js';
import { clientAddressKey } from './client-address.js';
import type { RateLimitRecord } from './memory-rate-limit-storage.js';
import { rateLimitedError } from './rate-limited.error.js';

const THROTTLER = 'auth-failure';
/** Blocked addresses one instance remembers; beyond it, the oldest are asked of the storage again. */
export const MAX_BLOCKED_ADDRESSES = 10_000;
const WHAT = 'failed authentications';

/** The per-address budget for refused credentials; a block is also remembered here, to refuse without a round trip. */
@Injectable()
export class AuthFailureLimiter {
  /**
   * Address key -> when its block ends (epoch ms), and how many of its keys were refused since: past the budget, as many
   * again are looked up per block (docs/operating.md, "Rate limits").
   */
  private readonly blocked = new LRUCache<string, { until: number; lookupsSpent: number }>({
    max: MAX_BLOCKED_ADDRESSES,
    ttl: RATE_LIMIT_WINDOW_MS,
  });

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  isBlocked(ip: string): boolean {
    // The common case on every request: nobody is blocked, and the address is not even keyed.
    if (this.blocked.size === 0) return false;
    const block = this.blocked.get(clientAddressKey(ip));
    return block !== undefined && block.until > Date.now();
  }

  /** Whether a key from this blocked address that needs a lookup may have one. */
  hasLookupsLeft(ip: string): boolean {
    return (this.blocked.get(clientAddressKey(ip))?.lookupsSpent ?? 0) < this.config.authFailureLimitPerMinute;
  }

  /** A key from this blocked address was refused past the budget: one of its lookups is spent. */
  spendLookup(ip: string): void {
    const block = this.blocked.get(clientAddressKey(ip));
    if (block) block.lookupsSpent += 1;
  }

  /** The 429 for a blocked address. */
  refusal(ip: string): ApiError {
    const until = this.blocked.get(clientAddressKey(ip))?.until ?? Date.now();
    return rateLimitedError(this.config.authFailureLimitPerMinute, Math.ceil((until - Date.now()) / 1000), WHAT);
  }

  /** Counts one refused credential; throws the 429 when that exceeds the budget. */
  async recordFailure(ip: string): Promise<void> {
    const record = await this.recordFailureWithout429(ip);
    if (record.isBlocked) throw rateLimitedError(this.config.authFailureLimitPerMinute, record.timeToBlockExpire, WHAT);
  }

  /** Counts one refused credential that keeps its own answer whatever the budget (an expired key). */
  async recordFailureWithout429(ip: string): Promise<RateLimitRecord> {
    const address = clientAddressKey(ip);
    const limit = this.config.authFailureLimitPerMinute;
    const record = await this.storage.increment(address, RATE_LIMIT_WINDOW_MS, limit, RATE_LIMIT_WINDOW_MS, THROTTLER);
    if (record.isBlocked) {
      const lookupsSpent = this.blocked.get(address)?.lookupsSpent ?? 0;
      this.blocked.set(address, { until: Date.now() + record.timeToBlockExpire * 1000, lookupsSpent });
    }
    return record;
  }

  get blockedCount(): number {
    return this.blocked.size;
  }
}
