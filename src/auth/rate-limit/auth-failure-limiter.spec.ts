import { defaultConfig } from '../../../test/support/config.js';
import { ApiError } from '../../edge/errors/api-error.js';
import { ErrorCode } from '../../edge/errors/error-code.js';
import { AuthFailureLimiter, MAX_BLOCKED_ADDRESSES, Refusal } from './auth-failure-limiter.js';
import { MAX_RATE_LIMIT_COUNTERS, MemoryRateLimitStorage } from './memory-rate-limit-storage.js';

// Three times the counters' cap, with ten times the blocked addresses' cap going over budget: both caps are reached.
const ADDRESSES = 3 * MAX_RATE_LIMIT_COUNTERS;

/** The n-th of `ADDRESSES` distinct client addresses: IPv4 for even n, IPv6 (each in its own /64) for odd n. */
const address = (n: number) =>
  n % 2 === 0
    ? `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`
    : `2001:db8:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::1`;

describe('AuthFailureLimiter under address rotation', () => {
  it(`holds at most the capped number of counters for ${ADDRESSES.toLocaleString('en')} distinct addresses`, async () => {
    const storage = new MemoryRateLimitStorage();
    const limiter = new AuthFailureLimiter(storage, { ...defaultConfig(), authFailureLimitPerMinute: 1 });
    // One refusal for every credential: the limiter's cost is measured here, not that of building errors.
    const refusal = new Refusal(new ApiError(401, ErrorCode.Unauthorized, 'Not valid.'));
    const refused = () => Promise.resolve(refusal);
    let blocked = 0;
    for (let n = 0; n < ADDRESSES; n += 1) {
      // Every tenth address goes over its budget of 1, so the blocked addresses are bounded too.
      const failures = n % 10 === 0 ? 2 : 1;
      for (let failure = 0; failure < failures; failure += 1) {
        await limiter
          .decide(address(n), refused)
          .catch((error: ApiError) => (blocked += Number(error.getStatus() === 429)));
      }
    }
    expect(blocked).toBe(ADDRESSES / 10);
    expect(blocked).toBeGreaterThan(MAX_BLOCKED_ADDRESSES);
    expect(storage.size).toBeLessThanOrEqual(MAX_RATE_LIMIT_COUNTERS);
    expect(storage.size).toBe(MAX_RATE_LIMIT_COUNTERS);
    expect(limiter.blockedCount).toBeLessThanOrEqual(MAX_BLOCKED_ADDRESSES);
    // The most recent addresses are the ones still counted.
    expect(await limiter.decide(address(ADDRESSES - 10), (lookupsLeft) => Promise.resolve(lookupsLeft !== null))).toBe(
      true,
    );
  }, 120_000);
});
