/** A 429 exactly as the service answers it: the Error body, `Retry-After` and the `X-RateLimit-*` headers. */
import { expect } from '@jest/globals';
export function expectRateLimited(response: { status: number; headers: Headers; body: unknown }, limit: number) {
  expect(response.status).toBe(429);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.body).toEqual({ code: 'rate_limited', message: expect.stringMatching(/^Too many/), status: 429 });
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(response.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(response.headers.get('x-ratelimit-reset')).toBe(String(retryAfter));
}
