import { ApiError } from '../../http/errors/api-error.js';
import { ErrorCode } from '../../http/errors/error-code.js';

/**
 * The 429 answer: the Error body, `Retry-After` (RFC 9110 §10.2.3) and the
 * X-RateLimit-* family the successful responses carry.
 */
export function rateLimitedError(limit: number, retryAfterSeconds: number, what: string): ApiError {
  const seconds = String(Math.max(1, retryAfterSeconds));
  return new ApiError(429, ErrorCode.RateLimited, `Too many ${what}; retry in ${seconds} s.`, {
    'Retry-After': seconds,
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': seconds,
  });
}
