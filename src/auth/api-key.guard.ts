import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { ApiError } from '../edge/errors/api-error.js';
import { ErrorCode } from '../edge/errors/error-code.js';
import { AuthFailureLimiter } from './rate-limit/auth-failure-limiter.js';
import type { ApiKeyIdentity, AuthenticatedRequest } from './api-key-identity.js';
import { REALM } from '../edge/http.constants.js';
import { IS_PUBLIC } from './public.decorator.js';

/**
 * The global guard: every route needs a valid bearer key unless marked
 * `@Public()`. In this order: an address over its failed-authentication
 * budget is refused before any key lookup; a failed authentication is
 * counted against its address. The key's own budget is ApiKeyThrottlerGuard's, which runs next.
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard('bearer') {
  constructor(
    private readonly reflector: Reflector,
    private readonly authFailures: AuthFailureLimiter,
  ) {
    super();
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;

    const http = context.switchToHttp();
    const request = http.getRequest<AuthenticatedRequest>();
    this.authFailures.assertNotBlocked(request.ip);
    try {
      await super.canActivate(context);
    } catch (error) {
      if (error instanceof ApiError && error.getStatus() === 401) await this.authFailures.recordFailure(request.ip);
      throw error;
    }
    return true;
  }

  // `challenge` is what passport-http-bearer answers: the WWW-Authenticate value
  // (RFC 6750 §3), or a bare status (400) for a malformed Authorization header.
  handleRequest<TUser = ApiKeyIdentity>(error: Error | null, identity: TUser | false, challenge: unknown): TUser {
    if (error) throw error;
    if (identity) return identity;
    if (typeof challenge === 'string' && challenge.includes('invalid_token')) {
      throw new ApiError(401, ErrorCode.Unauthorized, 'The API key is not valid.', { 'WWW-Authenticate': challenge });
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
