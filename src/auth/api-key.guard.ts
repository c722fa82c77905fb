import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { ApiError } from '../edge/errors/api-error.js';
import { ErrorCode } from '../edge/errors/error-code.js';
import { AuthFailureLimiter } from './rate-limit/auth-failure-limiter.js';
import type { ApiKeyIdentity, AuthenticatedRequest } from './api-key-identity.js';
import { ApiKeyRefusals } from './api-key-refusals.js';
import { type ApiKeyScope, REQUIRED_SCOPE } from './api-key-scope.js';
import { ApiKeyStore } from './api-key-store.js';
import { bearerToken } from './bearer-token.js';
import { bearerChallenge } from '../edge/http.constants.js';
import { insufficientScope, KeyRefusedError } from './key-refused.error.js';
import { IS_PUBLIC } from './public.decorator.js';

/**
 * The global guard (@nestjs/passport's AuthGuard) → BearerStrategy (passport-http-bearer) → ApiKeyStore. Past its
 * address's failed-authentication budget, an unknown or revoked key gets 429 and an expired one its 401, each from a
 * bounded number of lookups by digest, while a valid one is still served (docs/operating.md, "Rate limits and
 * security headers").
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard('bearer') {
  /** Per handler: public, or the scope it needs (null: any key). */
  private readonly routes = new WeakMap<object, { public: boolean; scope: ApiKeyScope | null }>();

  constructor(
    private readonly reflector: Reflector,
    private readonly authFailures: AuthFailureLimiter,
    private readonly keys: ApiKeyStore,
    private readonly refusals: ApiKeyRefusals,
  ) {
    super();
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.accessOf(context);
    if (access.public) return true;

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (this.authFailures.isBlocked(request.ip)) await this.admitPastBudget(request);
    try {
      await super.canActivate(context);
    } catch (error) {
      if (error instanceof KeyRefusedError) {
        this.refusals.count(error.reason);
        // Only an expired key is told apart from an unknown one: its client has a replacement to move to.
        if (error.reason === 'expired') await this.authFailures.countFailure(request.ip);
        else await this.authFailures.recordFailure(request.ip);
      }
      throw error;
    }
    const scopes = request.user!.scopes;
    if (access.scope !== null && scopes !== null && !scopes.includes(access.scope)) {
      this.refusals.count('insufficient_scope');
      throw insufficientScope(access.scope);
    }
    return true;
  }

  private accessOf(context: ExecutionContext) {
    const handler = context.getHandler();
    let access = this.routes.get(handler);
    if (!access) {
      const targets = [handler, context.getClass()];
      access = {
        public: this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, targets) ?? false,
        scope: this.reflector.getAllAndOverride<ApiKeyScope | undefined>(REQUIRED_SCOPE, targets) ?? null,
      };
      this.routes.set(handler, access);
    }
    return access;
  }

  /**
   * Past the budget, and counted no more: no key goes on to its 401, an expired one gets it here, any other refused
   * one 429. A key not answered without a lookup (the address spent its lookups) is counted and answered as unknown.
   */
  private async admitPastBudget(request: AuthenticatedRequest): Promise<void> {
    const key = bearerToken(request.headers.authorization);
    if (key === null) return;
    const screened = await this.keys.screen(key, this.authFailures.mayLookUp(request.ip));
    if (screened === null) return;
    const refusal = screened ?? 'unknown';
    this.refusals.count(refusal);
    if (refusal === 'expired') throw new KeyRefusedError(refusal);
    this.authFailures.countRefusedLookup(request.ip);
    throw this.authFailures.refusal(request.ip);
  }

  /** A refused key arrives as `error` (from the strategy); `status` 400 is passport-http-bearer's malformed header. */
  handleRequest<TUser = ApiKeyIdentity>(
    error: Error | null,
    identity: TUser | false,
    _info: unknown,
    _context: ExecutionContext,
    status?: number,
  ): TUser {
    if (error) throw error;
    if (identity) return identity;
    const malformed = status === 400;
    throw new ApiError(
      401,
      ErrorCode.Unauthorized,
      malformed
        ? 'The Authorization header is malformed: use Bearer <key>.'
        : 'An API key is required: send Authorization: Bearer <key>.',
      { 'WWW-Authenticate': bearerChallenge(malformed ? { error: 'invalid_request' } : {}) },
    );
  }
}
