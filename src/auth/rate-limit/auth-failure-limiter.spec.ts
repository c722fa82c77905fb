import { defaultConfig } from '../../../test/support/config.js';
import { ApiError } from '../../edge/errors/api-error.js';
import { ErrorCode } from '../../edge/errors/error-code.js';
import { AuthFailureLimiter, MAX_BLOCKED_ADDRESSES, Refusal } from './auth-failure-limiter.js';
import { MemoryRateLimitStorage } from './memory-rate-limit-storage.js';

// Storage for as many counters as the limiter remembers blocked addresses, and three times as many addresses, each
// going over its budget: both caps are reached. The caps are set small; the limiter's own default is checked apart.
const COUNTERS = 100;
const ADDRESSES = 3 * COUNTERS;
const sizeOf = (owner: object, cache: string) => (owner as Record<string, { size: number }>)[cache].size;

/** The n-th of `ADDRESSES` distinct client addresses: IPv4 for even n, IPv6 (each in its own /64) for odd n. */
const address = (n: number) =>
  n % 2 === 0
    ? `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`
    : `2001:db8:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::1`;

describe('AuthFailureLimiter under address rotation', () => {
  it(`holds at most the capped numbers of counters and blocked addresses for ${ADDRESSES.toLocaleString('en')} distinct addresses`, async () => {
    const storage = new MemoryRateLimitStorage(Date.now, COUNTERS);
    const config = { ...defaultConfig(), authFailureLimitPerMinute: 1 };
    const limiter = new AuthFailureLimiter(storage, config, COUNTERS);
    // One refusal for every credential: the limiter's cost is measured here, not that of building errors.
    const refusal = new Refusal(new ApiError(401, ErrorCode.Unauthorized, 'Not valid.'));
    const refused = () => Promise.resolve(refusal);
    let blocked = 0;
    for (let n = 0; n < ADDRESSES; n += 1) {
      for (let failure = 0; failure < 2; failure += 1) {
        await limiter
          .decide(address(n), refused)
          .catch((error: ApiError) => (blocked += Number(error.getStatus() === 429)));
      }
    }
    expect(blocked).toBe(ADDRESSES);
    expect(sizeOf(storage, 'windows')).toBe(COUNTERS);
    expect(sizeOf(limiter, 'blocked')).toBe(COUNTERS);
    const blockedCap = (owner: AuthFailureLimiter) => (owner as unknown as Record<string, { max: number }>).blocked.max;
    expect(blockedCap(new AuthFailureLimiter(storage, config))).toBe(MAX_BLOCKED_ADDRESSES);
    // The most recent addresses are the ones still remembered; the first are forgotten.
    const remembered = (n: number) =>
      limiter.decide(address(n), (lookupsLeft) => Promise.resolve(lookupsLeft !== null));
    expect(await remembered(ADDRESSES - 1)).toBe(true);
    expect(await remembered(0)).toBe(false);
  });
});
