import { DatabaseOutage, OUTAGE_GRACE_JITTER } from './database-outage.js';

describe('DatabaseOutage', () => {
  let now: number;
  const outage = (jitter = 0) => new DatabaseOutage(30_000, () => now, jitter);

  beforeEach(() => (now = 1_000_000));

  it('is within its grace from the first failed round until the grace has passed, then not', () => {
    const o = outage();
    expect(o.withinGrace(true)).toBe(true);
    now += 29_999;
    expect(o.withinGrace(true)).toBe(true);
    now += 1;
    expect(o.withinGrace(true)).toBe(false);
    now += 60_000;
    expect(o.withinGrace(true)).toBe(false);
  });

  it('gives each instance up to OUTAGE_GRACE_JITTER more grace, by its own jitter', () => {
    const o = outage(1);
    expect(o.withinGrace(true)).toBe(true);
    now += 30_000 * (1 + OUTAGE_GRACE_JITTER) - 1;
    expect(o.withinGrace(true)).toBe(true);
    now += 1;
    expect(o.withinGrace(true)).toBe(false);
  });

  it('starts over once the database has answered every round for the grace', () => {
    const o = outage();
    expect(o.withinGrace(true)).toBe(true);
    now += 40_000;
    expect(o.withinGrace(true)).toBe(false);
    expect(o.withinGrace(false)).toBe(false);
    now += 30_000;
    expect(o.withinGrace(false)).toBe(false);
    now += 1_000;
    expect(o.withinGrace(true)).toBe(true);
    now += 29_999;
    expect(o.withinGrace(true)).toBe(true);
  });

  it('does not start over after rounds that passed for less than the grace: a flapping path is one outage', () => {
    const o = outage();
    expect(o.withinGrace(true)).toBe(true);
    for (let round = 0; round < 10; round += 1) {
      now += 4_000;
      expect(o.withinGrace(false)).toBe(false);
      now += 1_000;
      expect(o.withinGrace(true)).toBe(round < 5);
    }
  });

  it('with no grace, is never within it', () => {
    const o = new DatabaseOutage(0, () => now);
    expect(o.withinGrace(true)).toBe(false);
  });
});
