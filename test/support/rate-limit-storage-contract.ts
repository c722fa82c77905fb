import { randomBytes } from 'node:crypto';
import type { ThrottlerStorage as RateLimitStorage } from '@nestjs/throttler';

const MINUTE = 60_000;

/** What every rate-limit storage must do, run against the in-memory one (npm test) and Redis (npm run test:system). */
export function describeRateLimitStorage(
  name: string,
  open: () => Promise<{ storage: RateLimitStorage; close: () => Promise<void> }>,
): void {
  describe(`rate-limit storage ${name}`, () => {
    let storage: RateLimitStorage;
    let close: () => Promise<void>;
    const key = () => randomBytes(6).toString('hex');

    beforeAll(async () => {
      ({ storage, close } = await open());
    });
    afterAll(() => close());

    it('counts hits in a window and refuses the one over the limit until the window ends', async () => {
      const id = key();
      const records = [];
      for (let i = 0; i < 4; i += 1) records.push(await storage.increment(id, MINUTE, 3, 0, 'api-key'));
      expect(records.map((record) => [record.totalHits, record.isBlocked])).toEqual([
        [1, false],
        [2, false],
        [3, false],
        [4, true],
      ]);
      expect(records[0].timeToExpire).toBeGreaterThan(58);
      expect(records[0].timeToExpire).toBeLessThanOrEqual(60);
      expect(records[3].timeToBlockExpire).toBeGreaterThan(58);
      expect(records[3].timeToBlockExpire).toBeLessThanOrEqual(60);
    });

    it('keeps keys and throttler names apart', async () => {
      const id = key();
      await storage.increment(id, MINUTE, 1, 0, 'api-key');
      expect((await storage.increment(key(), MINUTE, 1, 0, 'api-key')).isBlocked).toBe(false);
      expect((await storage.increment(id, MINUTE, 1, 0, 'auth-failure')).isBlocked).toBe(false);
      expect((await storage.increment(id, MINUTE, 1, 0, 'api-key')).isBlocked).toBe(true);
    });

    it('holds a block for blockDuration without counting further hits', async () => {
      const id = key();
      await storage.increment(id, 1_000, 1, MINUTE, 'auth-failure');
      const over = await storage.increment(id, 1_000, 1, MINUTE, 'auth-failure');
      expect(over.isBlocked).toBe(true);
      expect(over.timeToBlockExpire).toBeGreaterThan(58);
      const still = await storage.increment(id, 1_000, 1, MINUTE, 'auth-failure');
      expect(still.isBlocked).toBe(true);
      expect(still.timeToBlockExpire).toBeGreaterThan(58);
    });

    it('starts a new window once the old one has expired', async () => {
      const id = key();
      await storage.increment(id, 200, 1, 0, 'api-key');
      expect((await storage.increment(id, 200, 1, 0, 'api-key')).isBlocked).toBe(true);
      const deadline = Date.now() + 5_000;
      let record = await storage.increment(id, 200, 1, 0, 'api-key');
      while (record.isBlocked && Date.now() < deadline) {
        await new Promise((wake) => setTimeout(wake, 50));
        record = await storage.increment(id, 200, 1, 0, 'api-key');
      }
      expect(record).toMatchObject({ isBlocked: false, totalHits: 1 });
    });

    it('counts concurrent hits exactly once each', async () => {
      const id = key();
      const records = await Promise.all(
        Array.from({ length: 50 }, () => storage.increment(id, MINUTE, 20, 0, 'api-key')),
      );
      const passed = records.filter((record) => !record.isBlocked).map((record) => record.totalHits);
      // Each hit let through is counted once (refused ones may or may not add to the count: both storages refuse them).
      expect(passed.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });
  });
}
