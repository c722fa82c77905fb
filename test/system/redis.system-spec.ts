import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { createServer, Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { RedisRateLimitStorage } from '../../src/auth/rate-limit/redis-rate-limit-storage.js';
import type { RateLimitStorageKind } from '../../src/auth/rate-limit/rate-limit-storage-gauge.js';
import { freePort } from '../support/database-server.js';
import { expectRateLimited } from '../support/expect-rate-limited.js';
import { pollUntil } from '../support/poll.js';
import { describeRateLimitStorage } from '../support/rate-limit-storage-contract.js';
import { startRedisServer, RedisServer } from '../support/redis-server.js';
import { auth, request, startTestApp } from '../support/test-app.js';

const MINUTE = 60_000;

const randomIssuedKey = () => `pet_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;

/** The warnings RedisRateLimitStorage logs from now on (Nest's Logger; the other warnings are not written). */
function captureRedisWarnings(): string[] {
  const warnings: string[] = [];
  jest.spyOn(Logger.prototype, 'warn').mockImplementation(function (this: Logger, message: unknown) {
    if ((this as unknown as { context?: string }).context === 'RedisRateLimitStorage') warnings.push(String(message));
  });
  return warnings;
}

/** A TCP server that accepts and at once closes every connection: a Redis that is there but never answers. */
async function refusingRedis(): Promise<{ url: string; attempts: () => number; close: () => Promise<void> }> {
  let attempts = 0;
  const server: Server = createServer((socket) => {
    attempts += 1;
    socket.destroy();
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${port}`,
    attempts: () => attempts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

afterEach(() => jest.restoreAllMocks());

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

describe('RedisRateLimitStorage when Redis goes away and comes back', () => {
  it('counts in memory while Redis is down (one warning), and in Redis again once it is back', async () => {
    const warnings = captureRedisWarnings();
    const gauge: RateLimitStorageKind[] = [];
    let redis = await startRedisServer();
    const storage = new RedisRateLimitStorage(redis.url, { storageInUse: (storage) => gauge.push(storage) });
    await storage.onModuleInit();
    try {
      expect(storage.storage).toBe('redis');
      expect((await storage.increment('shared', MINUTE, 1, 0, 'api-key')).isBlocked).toBe(false);
      expect((await storage.increment('shared', MINUTE, 1, 0, 'api-key')).isBlocked).toBe(true);

      await redis.stop();
      await pollUntil(() => storage.storage === 'memory', { what: 'the storage to fall back to memory' });
      // The limit still holds, counted in this process.
      expect((await storage.increment('during', MINUTE, 1, 0, 'api-key')).isBlocked).toBe(false);
      expect((await storage.increment('during', MINUTE, 1, 0, 'api-key')).isBlocked).toBe(true);
      await pollUntil(() => warnings.length > 0, { what: 'the warning' });

      redis = await startRedisServer(redis.port);
      await pollUntil(() => storage.storage === 'redis', { what: 'the storage to return to Redis' });
      expect((await storage.increment('after', MINUTE, 1, 0, 'api-key')).isBlocked).toBe(false);
      // Counted in Redis: another instance sees the same budget.
      const other = new RedisRateLimitStorage(redis.url);
      await other.onModuleInit();
      expect((await other.increment('after', MINUTE, 1, 0, 'api-key')).isBlocked).toBe(true);
      other.onApplicationShutdown();

      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^Redis is unreachable \(.+\): rate limits are counted in this instance's memory/);
      expect(gauge).toEqual(['memory', 'redis', 'memory', 'redis']);
    } finally {
      storage.onApplicationShutdown();
      await redis.stop();
    }
  }, 60_000);
});

// One budget per key across instances sharing a Redis: test/system/fleet.system-spec.ts.
describe('the warning about Redis at start-up', () => {
  it('is not given when Redis is healthy (the service registers the storage under two tokens)', async () => {
    const warnings = captureRedisWarnings();
    const redis = await startRedisServer();
    const t = await startTestApp({ redisUrl: redis.url });
    try {
      expect((await request(t.origin, '/v1/pets', { headers: auth() })).status).toBe(200);
      expect(warnings).toEqual([]);
    } finally {
      await t.close();
      await redis.stop();
    }
  });

  it('is given once when Redis never answers, and rate limits still hold, counted in the instance', async () => {
    const warnings = captureRedisWarnings();
    const unreachable = await refusingRedis();
    const t = await startTestApp({ authFailureLimitPerMinute: 3, redisUrl: unreachable.url });
    try {
      expect(warnings).toHaveLength(1);
      for (let i = 0; i < 3; i += 1) {
        expect((await request(t.origin, '/v1/pets', { headers: auth(randomIssuedKey()) })).status).toBe(401);
      }
      expectRateLimited(await request(t.origin, '/v1/pets', { headers: auth(randomIssuedKey()) }), 3);
      const metrics = await request(t.origin, '/metrics');
      expect(metrics.text).toContain('animal_store_rate_limit_storage{storage="memory"} 1');
      expect(metrics.text).toContain('animal_store_rate_limit_storage{storage="redis"} 0');
      // ioredis keeps trying to reconnect; each failed attempt is an error it reports.
      await pollUntil(() => unreachable.attempts() >= 5, { what: 'five reconnection attempts' });
      expect(warnings).toHaveLength(1);
    } finally {
      await t.close();
      await unreachable.close();
    }
  });
});
