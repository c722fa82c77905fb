import { MemoryRateLimitStorage } from './memory-rate-limit-storage.js';

const MINUTE = 60_000;

describe('MemoryRateLimitStorage', () => {
  it('forgets finished windows, so one-off addresses do not pile up', async () => {
    let now = 0;
    const storage = new MemoryRateLimitStorage(() => now);
    for (let i = 0; i < 1_000; i += 1)
      await storage.increment(`10.0.${i >> 8}.${i & 255}`, MINUTE, 30, MINUTE, 'auth-failure');
    expect(storage.size).toBe(1_000);
    now += MINUTE + 10_000;
    await storage.increment('10.1.0.1', MINUTE, 30, MINUTE, 'auth-failure');
    expect(storage.size).toBe(1);
  });
});
