import { jest } from '@jest/globals';
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

  it('gives the value a key was admitted with while its interval lasts', () => {
    const throttle = new IntervalThrottle<string, { n: number }>({ intervalMs: 10_000, maxKeys: 10, now: clock });
    throttle.admit('a', { n: 1 });
    now += 9_999;
    expect(throttle.get('a')).toEqual({ n: 1 });
    now += 1;
    expect(throttle.get('a')).toBeUndefined();
  });

  describe('with onIntervalEnd', () => {
    beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
    afterEach(() => jest.useRealTimers());

    it('calls it when the interval ends, on its own timer, and at endAll', () => {
      const ended: [string, number][] = [];
      const throttle = new IntervalThrottle<string, number>({
        intervalMs: 10_000,
        maxKeys: 10,
        onIntervalEnd: (key, value) => void ended.push([key, value]),
      });
      throttle.admit('a', 1);
      jest.advanceTimersByTime(9_999);
      expect(ended).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(ended).toEqual([['a', 1]]);
      expect(throttle.admit('a', 2)).toBe(true);
      throttle.endAll();
      expect(ended).toEqual([
        ['a', 1],
        ['a', 2],
      ]);
      expect(throttle.admit('a', 3)).toBe(true);
    });

    it('holds the key for another interval with what it returns', () => {
      const ended: [string, number][] = [];
      const throttle = new IntervalThrottle<string, number>({
        intervalMs: 10_000,
        maxKeys: 10,
        onIntervalEnd: (key, value) => {
          ended.push([key, value]);
          return value < 3 ? value + 1 : undefined;
        },
      });
      throttle.admit('a', 1);
      jest.advanceTimersByTime(10_000);
      expect(throttle.get('a')).toBe(2);
      expect(throttle.admit('a', 9)).toBe(false);
      jest.advanceTimersByTime(20_000);
      expect(ended).toEqual([
        ['a', 1],
        ['a', 2],
        ['a', 3],
      ]);
      expect(throttle.admit('a', 4)).toBe(true);
    });

    it('leaves no timer behind at endAll, also for a key held for another interval', () => {
      const throttle = new IntervalThrottle<string, number>({
        intervalMs: 10_000,
        maxKeys: 10,
        onIntervalEnd: (_key, value) => value,
      });
      throttle.admit('a', 1);
      jest.advanceTimersByTime(10_000);
      expect(throttle.get('a')).toBe(1);
      throttle.endAll();
      expect(jest.getTimerCount()).toBe(0);
    });

    it('calls it for a key admitted again before its purge timer ran', () => {
      const ended: [string, number][] = [];
      const throttle = new IntervalThrottle<string, number>({
        intervalMs: 10_000,
        maxKeys: 10,
        now: clock,
        onIntervalEnd: (key, value) => void ended.push([key, value]),
      });
      throttle.admit('a', 1);
      now += 10_000;
      expect(throttle.admit('a', 2)).toBe(true);
      expect(ended).toEqual([['a', 1]]);
    });
  });
});
