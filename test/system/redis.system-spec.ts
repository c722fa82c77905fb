import { RedisRateLimitStorage } from '../../src/auth/rate-limit/redis-rate-limit-storage.js';
import { expectRateLimited } from '../support/expect-rate-limited.js';
import { describeRateLimitStorage } from '../support/rate-limit-storage-contract.js';
import { startRedisServer, RedisServer } from '../support/redis-server.js';
import { auth, request, startTestApp, TestApp } from '../support/test-app.js';

const MINUTE = 60_000;

// Needs Debian's redis-server: run by `npm run test:system`, not `npm test`.
describeRateLimitStorage('in a real Redis', async () => {
  const redis: RedisServer = await startRedisServer();
  const storage = new RedisRateLimitStorage(redis.url);
  await storage.onModuleInit();
  return {
    storage,
    close: async () => {
      storage.onApplicationShutdown();
      await redis.stop();
    },
  };
});

describe('RedisRateLimitStorage', () => {
  it('lets requests through while Redis is down', async () => {
    const redis = await startRedisServer();
    const storage = new RedisRateLimitStorage(redis.url);
    await storage.onModuleInit();
    expect((await storage.increment('k', MINUTE, 1, 0, 'api-key')).isBlocked).toBe(false);
    expect((await storage.increment('k', MINUTE, 1, 0, 'api-key')).isBlocked).toBe(true);
    await redis.stop();
    expect((await storage.increment('k', MINUTE, 1, 0, 'api-key')).isBlocked).toBe(false);
    storage.onApplicationShutdown();
  });
});

describe('rate limits shared through Redis (REDIS_URL)', () => {
  let redis: RedisServer;
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    redis = await startRedisServer();
    first = await startTestApp({ rateLimitPerMinute: 4, redisUrl: redis.url });
    second = await startTestApp({ rateLimitPerMinute: 4, redisUrl: redis.url });
  });
  afterAll(async () => {
    await Promise.allSettled([first?.close(), second?.close()]);
    await redis?.stop();
  });

  it('holds one budget per key across instances', async () => {
    const answers = [];
    for (const t of [first, second, first, second]) {
      answers.push((await request(t.origin, '/v1/pets', { headers: auth() })).headers.get('x-ratelimit-remaining'));
    }
    expect(answers).toEqual(['3', '2', '1', '0']);
    expectRateLimited(await request(second.origin, '/v1/pets', { headers: auth() }), 4);
    expectRateLimited(await request(first.origin, '/v1/pets', { headers: auth() }), 4);
  });
});
