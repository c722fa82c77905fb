import { ThrottlerStorageService } from '@nestjs/throttler';
import { describeRateLimitStorage } from './support/rate-limit-storage-contract.js';

// @nestjs/throttler's own in-memory storage, which the service uses without REDIS_URL.
describeRateLimitStorage('in memory', async () => {
  const storage = new ThrottlerStorageService();
  return { storage, close: async () => storage.onApplicationShutdown() };
});
