import { IntervalThrottle } from './interval-throttle.js';

describe('IntervalThrottle', () => {
  let now: number;
  const clock = () => now;
  beforeEach(() => (now = 1_000_000));

  it('admits a key once, then again exactly one interval later, not before', () => {
    const throttle = new IntervalThrottle<string>({ intervalMs: 10_000, maxKeys: 10, now: clock });
    expect(throttle.admit('a')).toBe(true);
    now += 9_999;
    expect(throttle.admit('a')).toBe(false);
    now += 1;
    expect(throttle.admit('a')).toBe(true);
    expect(throttle.admit('a')).toBe(false);
  });

  it('counts each key apart', () => {
    const throttle = new IntervalThrottle<string>({ intervalMs: 10_000, maxKeys: 10, now: clock });
    expect([throttle.admit('a'), throttle.admit('b'), throttle.admit('a'), throttle.admit('b')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('holds at most maxKeys, dropping the key admitted longest ago', () => {
    const throttle = new IntervalThrottle<string>({ intervalMs: 10_000, maxKeys: 2, now: clock });
    throttle.admit('a');
    throttle.admit('b');
    expect(throttle.admit('a')).toBe(false);
    throttle.admit('c');
    expect(throttle.admit('b')).toBe(false);
    expect(throttle.admit('a')).toBe(true);
  });
});
