import { MemoryRateLimitStorage } from '../src/auth/rate-limit/memory-rate-limit-storage.js';
import { describeRateLimitStorage } from './support/rate-limit-storage-contract.js';

// The storage the service uses without REDIS_URL (Redis: npm run test:system).
describeRateLimitStorage('in memory', () =>
  Promise.resolve({ storage: new MemoryRateLimitStorage(), close: () => Promise.resolve() }),
);
