// Hand-written: throttler's guard counts every request, this budget only failed authentications (in throttler's storage).
import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import { type AppConfig, RATE_LIMIT_WINDOW_MS } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import type { ApiError } from '../../edge/errors/api-error.js';
import { clientAddressKey } from './client-address.js';
import { rateLimitedError } from './rate-limited.error.js';

const THROTTLER = 'auth-failure';
/** Blocked addresses one instance remembers; beyond it, the oldest are asked of the storage again. */
export const MAX_BLOCKED_ADDRESSES = 10_000;
const WHAT = 'failed authentications';

/** A refused credential: its 401, and whether that answer stands whatever the budget (an expired key's). */
export class Refusal {
  constructor(
    readonly error: ApiError,
    readonly stands = false,
  ) {}
}

/** The per-address budget for refused credentials; a block is also remembered here, to refuse without a round trip. */
@Injectable()
export class AuthFailureLimiter {
  /** Address key -> when its block ends (epoch ms), its keys refused since (docs/operating.md, "Rate limits"). */
  private readonly blocked: LRUCache<string, { until: number; lookupsSpent: number }>;

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    // Nest provides no `Number`: the service always remembers MAX_BLOCKED_ADDRESSES; a spec may fill a smaller cap.
    @Optional() maxBlockedAddresses = MAX_BLOCKED_ADDRESSES,
  ) {
    this.blocked = new LRUCache({ max: maxBlockedAddresses, ttl: RATE_LIMIT_WINDOW_MS });
  }

  /**
   * What one credential presented from `ip` gets: what `judge` accepts, or its refusal. Past the budget `judge` is told
   * whether a credential it cannot answer from memory may be looked up (under it, null), nothing more is counted, and a
   * refusal is 429 unless it stands; under it every refusal counts, and the one that exceeds the budget is 429.
   */
  async decide<T>(ip: string, judge: (lookupsLeft: boolean | null) => Promise<T | Refusal>): Promise<T> {
    const limit = this.config.authFailureLimitPerMinute;
    // The common case on every request: nobody is blocked, and the address is not even keyed.
    let address = this.blocked.size === 0 ? undefined : clientAddressKey(ip);
    const block = address === undefined ? undefined : this.blocked.get(address);
    const blocked = block !== undefined && block.until > Date.now();
    const verdict = await judge(blocked ? block.lookupsSpent < limit : null);
    if (!(verdict instanceof Refusal)) return verdict;
    if (blocked) {
      if (verdict.stands) throw verdict.error;
      block.lookupsSpent += 1;
      throw rateLimitedError(limit, Math.ceil((block.until - Date.now()) / 1000), WHAT);
    }
    address ??= clientAddressKey(ip);
    const record = await this.storage.increment(address, RATE_LIMIT_WINDOW_MS, limit, RATE_LIMIT_WINDOW_MS, THROTTLER);
    if (!record.isBlocked) throw verdict.error;
    const lookupsSpent = this.blocked.get(address)?.lookupsSpent ?? 0;
    this.blocked.set(address, { until: Date.now() + record.timeToBlockExpire * 1000, lookupsSpent });
    throw verdict.stands ? verdict.error : rateLimitedError(limit, record.timeToBlockExpire, WHAT);
  }
}
