import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-http-bearer';
import type { ApiKeyIdentity } from './api-key-identity.js';
import { ApiKeyRefusals } from './api-key-refusals.js';
import { ApiKeyStore } from './api-key-store.js';
import { keyRefused } from './key-refused.error.js';
import { AuthFailureLimiter, Refusal } from './rate-limit/auth-failure-limiter.js';

/** Headers only for passport-http-bearer: `access_token` in the query or body (RFC 6750 §2.2-2.3) would reach logs. */
export const headersOnly = (request: Pick<FastifyRequest, 'headers'> & { ip?: string }) =>
  ({ headers: request.headers, ip: request.ip }) as never;

/** A missing or malformed header never reaches validate(): the guard's handleRequest answers those 401, uncounted. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly keys: ApiKeyStore,
    private readonly failures: AuthFailureLimiter,
    private readonly refusals: ApiKeyRefusals,
  ) {
    super({ passReqToCallback: true });
  }

  authenticate(request: Pick<FastifyRequest, 'headers'> & { ip?: string }, options?: object): void {
    super.authenticate(headersOnly(request), options);
  }

  /** An expired key keeps its 401 past the address's budget (AuthFailureLimiter): its client needs a replacement. */
  validate(request: Pick<FastifyRequest, 'ip'>, key: string): Promise<ApiKeyIdentity> {
    return this.failures.decide(request.ip, async (lookupsLeft) => {
      // Past the budget, a key the store cannot answer without a lookup it may not make is answered as unknown.
      const known = lookupsLeft === null ? null : await this.keys.refusalIfKnown(key, lookupsLeft);
      const verdict = known === null ? await this.keys.verify(key) : (known ?? 'unknown');
      if (typeof verdict !== 'string') return verdict;
      this.refusals.count(verdict);
      return new Refusal(keyRefused(verdict), verdict === 'expired');
    });
  }
}
