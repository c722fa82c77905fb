import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-http-bearer';
import type { ApiKeyIdentity } from './api-key-identity.js';
import { ApiKeyRefusals } from './api-key-refusals.js';
import { ApiKeyStore } from './api-key-store.js';
import { KeyRefusedError } from './key-refused.error.js';
import { AuthFailureLimiter } from './rate-limit/auth-failure-limiter.js';

/**
 * passport-http-bearer reads the key from `Authorization: Bearer <key>` (the only place the header is parsed), and
 * validate() decides what the key gets. A missing or malformed header never reaches it: the guard's handleRequest
 * answers those 401, uncounted.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly keys: ApiKeyStore,
    private readonly failures: AuthFailureLimiter,
    private readonly refusals: ApiKeyRefusals,
  ) {
    super({ passReqToCallback: true });
  }

  /** Headers only: `access_token` in the query or body (RFC 6750 §2.2-2.3) is ignored, since URLs end up in logs. */
  authenticate(request: Pick<FastifyRequest, 'headers'> & { ip?: string }, options?: object): void {
    super.authenticate({ headers: request.headers, ip: request.ip } as never, options);
  }

  /**
   * The key's identity, or its refusal: 401 with its reason, or 429 for the client address past its failed-
   * authentication budget (docs/operating.md, "Rate limits and security headers"). Every refusal is counted by reason
   * in animal_store_api_key_refusals_total; under the budget it also counts against the address.
   */
  async validate(request: Pick<FastifyRequest, 'ip'>, key: string): Promise<ApiKeyIdentity> {
    const { ip } = request;
    if (this.failures.isBlocked(ip)) {
      // Past the budget nothing more counts against the address, and a key the store cannot answer from memory is
      // looked up only while the address has lookups left (else answered as unknown). null: it may be valid.
      const refusal = await this.keys.refusalIfKnown(key, this.failures.hasLookupsLeft(ip));
      if (refusal !== null) {
        const reason = refusal ?? 'unknown';
        this.refusals.count(reason);
        if (reason === 'expired') throw new KeyRefusedError(reason);
        this.failures.spendLookup(ip);
        throw this.failures.refusal(ip);
      }
    }
    const verdict = await this.keys.verify(key);
    if (typeof verdict !== 'string') return verdict;
    this.refusals.count(verdict);
    // Under the budget every refusal counts against the address, and the one that exceeds it gets 429; an expired key
    // keeps its 401 (as past the budget): its client has a replacement to move to, not a reason to retry.
    if (verdict === 'expired') await this.failures.recordFailureWithout429(ip);
    else await this.failures.recordFailure(ip);
    throw new KeyRefusedError(verdict);
  }
}
