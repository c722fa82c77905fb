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

/** What a route asks of the caller, read once per handler from its metadata. */
interface RouteAccess {
  public: boolean;
  /** The scope a scoped key must hold; null: any valid key will do. */
  scope: ApiKeyScope | null;
}

/**
 * The global guard: every route needs a valid bearer key unless marked
 * `@Public()`, and a key limited to scopes needs the one the route names with
 * `@RequiresScope()` (403 otherwise). A presented key that is refused counts
 * against its address's failed-authentication budget. Past the budget, a key
 * the store does not know gets 429 before any lookup, and a valid one is served
 * as usual: one client's failures never lock out the others behind the same
 * address. A key that was issued and has expired or been revoked is always
 * answered 401 with its reason, past the budget from memory too: its holder
 * must be told to switch keys, not to retry (which a 429 says). The key's own
 * budget is ApiKeyThrottlerGuard's, which runs next. Refusals are counted by reason.
 *
 * The path of a key: this guard (@nestjs/passport's AuthGuard) → BearerStrategy (passport-http-bearer reads the
 * Authorization header) → ApiKeyStore (API_KEYS, then issued keys). A refused key comes back as the strategy's
 * KeyRefusedError, with its reason.
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard('bearer') {
  private readonly routes = new WeakMap<object, RouteAccess>();

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
        if (error.reason === 'unknown') await this.authFailures.recordFailure(request.ip);
        else await this.authFailures.countFailure(request.ip);
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

  private accessOf(context: ExecutionContext): RouteAccess {
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
   * Without credentials the request goes on to its 401; a key the store cannot know ends here with 429, and one
   * it knows to be expired or revoked with its 401. Neither is counted again: the address is already over.
   */
  private async admitPastBudget(request: AuthenticatedRequest): Promise<void> {
    const key = bearerToken(request.headers.authorization);
    const refusal = key === null ? null : await this.keys.screen(key);
    if (refusal === null) return;
    this.refusals.count(refusal);
    throw refusal === 'unknown' ? this.authFailures.refusal(request.ip) : new KeyRefusedError(refusal);
  }

  /**
   * passport's answer, in @nestjs/passport's documented override. A refused key arrives as `error` (the strategy
   * throws it); without an identity, `status` is passport-http-bearer's 400 for a malformed Authorization header,
   * and absent when no bearer key was sent.
   */
  handleRequest<TUser = ApiKeyIdentity>(
    error: Error | null,
    identity: TUser | false,
    _info: unknown,
    _context: ExecutionContext,
    status?: number,
  ): TUser {
    if (error) throw error;
    if (identity) return identity;
    if (status === 400) {
      throw new ApiError(401, ErrorCode.Unauthorized, 'The Authorization header is malformed: use Bearer <key>.', {
        'WWW-Authenticate': bearerChallenge({ error: 'invalid_request' }),
      });
    }
    throw new ApiError(401, ErrorCode.Unauthorized, 'An API key is required: send Authorization: Bearer <key>.', {
      'WWW-Authenticate': bearerChallenge(),
    });
  }
}
