import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ApiKeyIdentity } from '../api-key-identity.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { RATE_LIMIT_HEADERS, RATE_LIMIT_WINDOW_MS, rateLimitedError } from './rate-limited.error.js';
import { RateLimitStorage } from './rate-limit-storage.js';

export const API_KEY_THROTTLER = 'api-key';

/** The per-key budget, RATE_LIMIT_PER_MINUTE requests per key across all routes (0: off). */
@Injectable()
export class ApiKeyRateLimiter {
  readonly enabled: boolean;
  private readonly limit: number;
  private readonly limitHeader: string;

  constructor(
    private readonly storage: RateLimitStorage,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limit = config.rateLimitPerMinute;
    this.limitHeader = String(this.limit);
    this.enabled = this.limit > 0;
  }

  /** Counts one request of the key: sets the X-RateLimit-* headers, or throws the 429. */
  async consume(identity: ApiKeyIdentity, reply: FastifyReply): Promise<void> {
    const record = await this.storage.increment(identity.id, RATE_LIMIT_WINDOW_MS, this.limit, 0, API_KEY_THROTTLER);
    if (record.isBlocked) throw rateLimitedError(this.limit, record.timeToBlockExpire, 'requests for this API key');
    reply.headers({
      [RATE_LIMIT_HEADERS.limit]: this.limitHeader,
      [RATE_LIMIT_HEADERS.remaining]: String(Math.max(0, this.limit - record.totalHits)),
      [RATE_LIMIT_HEADERS.reset]: String(record.timeToExpire),
    });
  }
}
