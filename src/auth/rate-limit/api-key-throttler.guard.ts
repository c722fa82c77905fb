import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { AuthenticatedRequest } from '../api-key-identity.js';
import { rateLimitedError } from './rate-limited.error.js';

/** Each API key's RATE_LIMIT_PER_MINUTE across all routes; runs after ApiKeyGuard, and skips public routes. */
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
