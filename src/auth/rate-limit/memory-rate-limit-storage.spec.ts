import { MemoryRateLimitStorage } from './memory-rate-limit-storage.js';

const MINUTE = 60_000;
const counters = (storage: MemoryRateLimitStorage) =>
  (storage as unknown as { windows: { size: number } }).windows.size;

describe('MemoryRateLimitStorage', () => {
  it('forgets finished windows, so one-off addresses do not pile up', async () => {
    // Not 0: lru-cache takes a start time of 0 for "no ttl".
    let now = 1_000_000;
    const storage = new MemoryRateLimitStorage(() => now);
    for (let i = 0; i < 1_000; i += 1)
      await storage.increment(`10.0.${i >> 8}.${i & 255}`, MINUTE, 30, MINUTE, 'auth-failure');
    expect(counters(storage)).toBe(1_000);
    now += MINUTE + 10_000;
    await storage.increment('10.1.0.1', MINUTE, 30, MINUTE, 'auth-failure');
    expect(counters(storage)).toBe(1);
  });
});

describe('MemoryRateLimitStorage bound', () => {
  it('pushes out the least recently counted keys past its cap, keeping the ones in use', async () => {
    const storage = new MemoryRateLimitStorage(Date.now, 100);
    await storage.increment('busy', MINUTE, 1, 0, 'api-key');
    for (let i = 0; i < 1_000; i += 1) {
      await storage.increment(`10.2.${i >> 8}.${i & 255}`, MINUTE, 30, MINUTE, 'auth-failure');
      if (i % 50 === 0) await storage.increment('busy', MINUTE, 1_000, 0, 'api-key');
    }
    expect(counters(storage)).toBe(100);
    expect((await storage.increment('busy', MINUTE, 1_000, 0, 'api-key')).totalHits).toBe(22);
  });
});
