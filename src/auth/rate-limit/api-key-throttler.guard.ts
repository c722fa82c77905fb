import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { AuthenticatedRequest } from '../api-key-identity.js';
import { rateLimitedError } from './rate-limited.error.js';

/**
 * @nestjs/throttler's guard holding each API key to RATE_LIMIT_PER_MINUTE requests across all routes. It runs
 * after the API key guard (APP_GUARD order in AuthModule): public routes, which authenticate nobody, are skipped.
 */
@Injectable()
export class ApiKeyThrottlerGuard extends ThrottlerGuard {
  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    return Promise.resolve(context.switchToHttp().getRequest<AuthenticatedRequest>().user === undefined);
  }

  protected override getTracker(request: Record<string, unknown>): Promise<string> {
    return Promise.resolve((request as unknown as AuthenticatedRequest).user!.id);
  }

  protected override throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    throw rateLimitedError(detail.limit, detail.timeToBlockExpire, 'requests for this API key');
  }
}
