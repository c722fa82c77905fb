import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { EXPIRY_WARNING_INTERVAL_MS, EXPIRY_WARNING_WINDOW_MS, ExpiryWarnings } from './expiry-warnings.js';

describe('ExpiryWarnings', () => {
  const DAY = 86_400_000;
  const now = Date.parse('2026-11-25T12:00:00Z');
  let lines: string[];
  let warnings: ExpiryWarnings;

  beforeEach(() => {
    lines = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void lines.push(String(message)));
    warnings = new ExpiryWarnings();
  });
  afterEach(() => jest.restoreAllMocks());

  it('says nothing of a key used more than 7 days before its expiry, or without one', () => {
    expect(EXPIRY_WARNING_WINDOW_MS).toBe(7 * DAY);
    warnings.check('1', now + 7 * DAY + 1, now);
    warnings.check('2', Infinity, now);
    expect(lines).toEqual([]);
  });

  it('warns once a day per key while it is used in its last 7 days, naming its id and expiry, never its key', () => {
    const expiresAt = now + 3 * DAY;
    warnings.check('5', expiresAt, now);
    warnings.check('5', expiresAt, now + 1_000);
    warnings.check('5', expiresAt, now + EXPIRY_WARNING_INTERVAL_MS - 1);
    expect(lines).toEqual([
      'API key 5 was used and expires at 2026-11-28T12:00:00.000Z (in 3 days): rotate it (npm run apikey -- rotate 5) ' +
        'and hand its clients the new key before they are refused. Logged once a day per key and instance.',
    ]);
    warnings.check('5', expiresAt, now + EXPIRY_WARNING_INTERVAL_MS);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('(in 2 days)');
  });

  it('counts each key apart', () => {
    warnings.check('5', now + DAY, now);
    warnings.check('6', now + 90 * 60_000, now);
    expect(lines.map((line) => line.slice(0, 10))).toEqual(['API key 5 ', 'API key 6 ']);
    expect(lines[1]).toContain('(in 1 h)');
  });
});
