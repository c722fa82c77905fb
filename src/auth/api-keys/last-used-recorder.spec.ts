import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { ApiKeysRepository } from './api-keys.repository.js';
import { LAST_USED_INTERVAL_MS, LastUsedRecorder } from './last-used-recorder.js';

describe('LastUsedRecorder', () => {
  const touch = jest.fn<(ids: readonly string[], at: Date, intervalMs: number) => Promise<void>>();
  const recorder = () => new LastUsedRecorder({ touch } as unknown as ApiKeysRepository);
  const start = Date.parse('2027-01-01T00:00:00Z');
  const clock = jest.spyOn(Date, 'now');
  beforeEach(() => {
    touch.mockReset().mockResolvedValue(undefined);
    clock.mockReturnValue(start);
  });
  afterAll(() => clock.mockRestore());

  it('writes many uses of the same keys as one batch', async () => {
    const last = recorder();
    for (let i = 0; i < 1_000; i += 1) {
      clock.mockReturnValue(start + i);
      last.record(i % 2 === 0 ? '1' : '2');
    }
    await last.flush(11_000);
    expect(touch).toHaveBeenCalledTimes(1);
    expect(touch).toHaveBeenCalledWith(['1', '2'], new Date(11_000), LAST_USED_INTERVAL_MS);
  });

  it('writes a key again only once the interval has passed', async () => {
    const last = recorder();
    last.record('1');
    await last.flush(start);
    clock.mockReturnValue(start + LAST_USED_INTERVAL_MS - 1);
    last.record('1');
    await last.flush(start + LAST_USED_INTERVAL_MS - 1);
    expect(touch).toHaveBeenCalledTimes(1);
    clock.mockReturnValue(start + LAST_USED_INTERVAL_MS);
    last.record('1');
    await last.flush(start + LAST_USED_INTERVAL_MS);
    expect(touch).toHaveBeenCalledTimes(2);
  });

  it('swallows a failed write: a database fault silently (Database recorded it), anything else with an error line', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      touch.mockRejectedValueOnce(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      const last = recorder();
      last.record('1');
      await expect(last.flush()).resolves.toBeUndefined();
      expect(logged).not.toHaveBeenCalled();
      touch.mockRejectedValueOnce(new TypeError('ids is not iterable'));
      last.record('2');
      await expect(last.flush()).resolves.toBeUndefined();
      expect(logged).toHaveBeenCalledWith('Could not record the last use of API key(s) 2: ids is not iterable');
    } finally {
      logged.mockRestore();
    }
  });
});
