import { BoundedTtlCache } from './bounded-ttl-cache.js';

describe('BoundedTtlCache', () => {
  let now: number;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000;
  });

  it('answers within its TTL and forgets afterwards', () => {
    const cache = new BoundedTtlCache<string, string | null>(10, 2_000, clock);
    cache.set('valid', 'identity');
    cache.set('unknown', null);
    now += 1_999;
    expect(cache.get('valid')).toBe('identity');
    expect(cache.get('unknown')).toBeNull();
    now += 1;
    expect(cache.get('valid')).toBeUndefined();
    expect(cache.get('unknown')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never grows past its bound, however many distinct keys arrive', () => {
    const cache = new BoundedTtlCache<string, null>(100, 60_000, clock);
    for (let i = 0; i < 100_000; i += 1) cache.set(`random-${i}`, null);
    expect(cache.size).toBe(100);
    expect(cache.get('random-99999')).toBeNull();
    expect(cache.get('random-0')).toBeUndefined();
  });

  it('evicts the least recently used entry first', () => {
    const cache = new BoundedTtlCache<string, number>(2, 60_000, clock);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect(cache.get('a')).toBe(1);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('c')).toBe(3);
  });

  it('replaces a key without counting it twice', () => {
    const cache = new BoundedTtlCache<string, number>(2, 60_000, clock);
    cache.set('a', 1);
    cache.set('a', 2);
    cache.set('b', 3);
    expect(cache.size).toBe(2);
    expect(cache.get('a')).toBe(2);
  });
});
