import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { ApiError } from '../edge/errors/api-error.js';
import { ErrorCode } from '../edge/errors/error-code.js';
import { AuthFailureLimiter } from './rate-limit/auth-failure-limiter.js';
import type { ApiKeyIdentity, AuthenticatedRequest } from './api-key-identity.js';
import { ApiKeyStore } from './api-key-store.js';
import { bearerToken } from './bearer-token.js';
import { REALM } from '../edge/http.constants.js';
import { IS_PUBLIC } from './public.decorator.js';

/** A key was presented and is not valid: the one refusal the failed-authentication budget counts. */
class KeyRefusedError extends ApiError {}

/**
 * The global guard: every route needs a valid bearer key unless marked
 * `@Public()`. A presented key that is refused counts against its address's
 * failed-authentication budget. Past the budget, a key the store does not know
 * gets 429 before any lookup, and a valid one is served as usual: one client's
 * failures never lock out the others behind the same address. The key's own
 * budget is ApiKeyThrottlerGuard's, which runs next.
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard('bearer') {
  constructor(
    private readonly reflector: Reflector,
    private readonly authFailures: AuthFailureLimiter,
    private readonly keys: ApiKeyStore,
  ) {
    super();
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (this.authFailures.isBlocked(request.ip)) await this.admitPastBudget(request);
    try {
      await super.canActivate(context);
    } catch (error) {
      if (error instanceof KeyRefusedError) await this.authFailures.recordFailure(request.ip);
      throw error;
    }
    return true;
  }

  /** Without credentials the request goes on to its 401; a key the store cannot know ends here. */
  private async admitPastBudget(request: AuthenticatedRequest): Promise<void> {
    const key = bearerToken(request.headers.authorization);
    if (key !== null && !(await this.keys.isKnown(key))) throw this.authFailures.refusal(request.ip);
  }

  // `challenge` is what passport-http-bearer answers: the WWW-Authenticate value
  // (RFC 6750 §3), or a bare status (400) for a malformed Authorization header.
  handleRequest<TUser = ApiKeyIdentity>(error: Error | null, identity: TUser | false, challenge: unknown): TUser {
    if (error) throw error;
    if (identity) return identity;
    if (typeof challenge === 'string' && challenge.includes('invalid_token')) {
      throw new KeyRefusedError(401, ErrorCode.Unauthorized, 'The API key is not valid.', {
        'WWW-Authenticate': challenge,
      });
    }
    if (typeof challenge === 'string') {
      throw new ApiError(401, ErrorCode.Unauthorized, 'An API key is required: send Authorization: Bearer <key>.', {
        'WWW-Authenticate': challenge,
      });
    }
    throw new ApiError(401, ErrorCode.Unauthorized, 'The Authorization header is malformed: use Bearer <key>.', {
      'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_request"`,
    });
  }
}
