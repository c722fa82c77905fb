import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { EXPIRY_WARNING_INTERVAL_MS, EXPIRY_WARNING_WINDOW_MS, ExpiryWarnings } from './expiry-warnings.js';

describe('ExpiryWarnings', () => {
  const DAY = 86_400_000;
  const now = Date.parse('2026-11-25T12:00:00Z');
  let lines: string[];
  let warnings: ExpiryWarnings;

  let clock: jest.SpiedFunction<typeof Date.now>;
  /** What the service does: the time it checks a key at is the clock's. */
  const checkAt = (id: string, expiresAt: number, at: number, replacedBy: string | null) => {
    clock.mockReturnValue(at);
    warnings.check(id, expiresAt, at, replacedBy);
  };

  beforeEach(() => {
    lines = [];
    clock = jest.spyOn(Date, 'now');
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void lines.push(String(message)));
    warnings = new ExpiryWarnings();
  });
  afterEach(() => jest.restoreAllMocks());

  it('says nothing of a key used more than 7 days before its expiry, or without one', () => {
    expect(EXPIRY_WARNING_WINDOW_MS).toBe(7 * DAY);
    checkAt('1', now + 7 * DAY + 1, now, null);
    checkAt('2', Infinity, now, null);
    expect(lines).toEqual([]);
  });

  it('warns once a day per key while it is used in its last 7 days, naming its id and expiry, never its key', () => {
    const expiresAt = now + 3 * DAY;
    checkAt('5', expiresAt, now, null);
    checkAt('5', expiresAt, now + 1_000, null);
    checkAt('5', expiresAt, now + EXPIRY_WARNING_INTERVAL_MS - 1, null);
    expect(lines).toEqual([
      'API key 5 was used and expires at 2026-11-28T12:00:00.000Z (in 3 days): rotate it with a new lifetime ' +
        '(npm run apikey -- rotate 5 --expires-in <N>d; without --expires-in the new key expires with this one) and ' +
        'hand its clients the new key before they are refused. Logged once a day per key and instance.',
    ]);
    checkAt('5', expiresAt, now + EXPIRY_WARNING_INTERVAL_MS, null);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('(in 2 days)');
  });

  it('tells operators a key in its overlap was replaced, naming its replacement instead of asking for a rotation', () => {
    checkAt('3', now + 3_600_000, now, '5');
    expect(lines).toEqual([
      'API key 3 was used and expires at 2026-11-25T13:00:00.000Z (in 1 h): it was replaced by key 5: move its ' +
        'clients to the new key before they are refused. Logged once a day per key and instance.',
    ]);
  });

  it('counts each key apart', () => {
    checkAt('5', now + DAY, now, null);
    checkAt('6', now + 90 * 60_000, now, null);
    expect(lines.map((line) => line.slice(0, 10))).toEqual(['API key 5 ', 'API key 6 ']);
    expect(lines[1]).toContain('(in 1 h)');
  });
});
