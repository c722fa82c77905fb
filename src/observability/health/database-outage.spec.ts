import { DatabaseOutage, OUTAGE_GRACE_JITTER } from './database-outage.js';

describe('DatabaseOutage', () => {
  let now: number;
  const outage = (jitter = 0) => new DatabaseOutage(30_000, 10_000, () => now, jitter);

  beforeEach(() => (now = 1_000_000));

  it('rides out an outage from the first failed round until the grace has passed, then takes the instance out', () => {
    const o = outage();
    expect(o.record(true)).toBe('riding-out');
    now += 29_999;
    expect(o.record(true)).toBe('riding-out');
    now += 1;
    expect(o.record(true)).toBe('out');
    now += 60_000;
    expect(o.record(true)).toBe('out');
  });

  it('gives each instance up to OUTAGE_GRACE_JITTER more grace, by its own jitter', () => {
    const o = outage(1);
    expect(o.record(true)).toBe('riding-out');
    now += 30_000 * (1 + OUTAGE_GRACE_JITTER) - 1;
    expect(o.record(true)).toBe('riding-out');
    now += 1;
    expect(o.record(true)).toBe('out');
  });

  it('keeps an instance it took out recovering until the database has answered every round for the recovery period', () => {
    const o = outage();
    o.record(true);
    now += 40_000;
    expect(o.record(true)).toBe('out');
    expect(o.record(false)).toBe('recovering');
    now += 9_999;
    expect(o.record(false)).toBe('recovering');
    now += 1;
    expect(o.record(false)).toBe('ready');
    // The outage has ended: the next one gets the whole grace again.
    now += 1_000;
    expect(o.record(true)).toBe('riding-out');
    now += 29_999;
    expect(o.record(true)).toBe('riding-out');
  });

  it('keeps a flapping path out: one passing round among failing ones never brings the instance back', () => {
    const o = outage();
    o.record(true);
    now += 30_000;
    expect(o.record(true)).toBe('out');
    for (let cycle = 0; cycle < 12; cycle += 1) {
      now += 1_000;
      expect(o.record(false)).toBe('recovering');
      now += 2_000;
      expect(o.record(true)).toBe('out');
    }
  });

  it('does not start over after rounds that passed for less than the recovery period: a flapping path is one outage', () => {
    const o = outage();
    expect(o.record(true)).toBe('riding-out');
    const states = [];
    for (let cycle = 0; cycle < 10; cycle += 1) {
      now += 4_000;
      states.push(o.record(false));
      now += 1_000;
      states.push(o.record(true));
    }
    // Ready on the passing rounds while within the grace; out from the grace on, recovering on the passing rounds.
    expect(states).toEqual([
      ...Array<string[]>(5).fill(['ready', 'riding-out']).flat(),
      'ready',
      'out',
      ...Array<string[]>(4).fill(['recovering', 'out']).flat(),
    ]);
  });

  it('with no grace, takes the instance out at the first failed round; with no recovery period, back at the first passing one', () => {
    const o = new DatabaseOutage(0, 0, () => now);
    expect(o.record(true)).toBe('out');
    expect(o.record(false)).toBe('ready');
  });
});
