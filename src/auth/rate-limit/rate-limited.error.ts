import { ApiError } from '../../edge/errors/api-error.js';
import { ErrorCode } from '../../edge/errors/error-code.js';

export const RATE_LIMIT_HEADERS = {
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
} as const;

/** The 429: `Retry-After` (RFC 9110 §10.2.3) and the X-RateLimit-* family the successful responses carry. */
export function rateLimitedError(limit: number, retryAfterSeconds: number, what: string): ApiError {
  const seconds = String(Math.max(1, retryAfterSeconds));
  return new ApiError(429, ErrorCode.RateLimited, `Too many ${what}; retry in ${seconds} s.`, {
    'Retry-After': seconds,
    [RATE_LIMIT_HEADERS.limit]: String(limit),
    [RATE_LIMIT_HEADERS.remaining]: '0',
    [RATE_LIMIT_HEADERS.reset]: seconds,
  });
}
