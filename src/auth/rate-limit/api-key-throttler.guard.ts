import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import type { ApiKeyIdentity } from '../api-key-identity.js';
import { rateLimitedError } from './rate-limited.error.js';

type AuthenticatedRequest = FastifyRequest & { user?: ApiKeyIdentity };

/**
 * @nestjs/throttler's guard holding each API key to RATE_LIMIT_PER_MINUTE requests across all routes. It runs
 * after the API key guard (APP_GUARD order in AuthModule): public routes, which authenticate nobody, are skipped.
 */
@Injectable()
export class ApiKeyThrottlerGuard extends ThrottlerGuard {
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return context.switchToHttp().getRequest<AuthenticatedRequest>().user === undefined;
  }

  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    return (request as unknown as AuthenticatedRequest).user!.id;
  }

  /** One budget per key, whichever route it calls (the default key is per route). */
  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }

  protected override async throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    throw rateLimitedError(detail.limit, detail.timeToBlockExpire, 'requests for this API key');
  }
}
