import { DatabaseOutage } from './database-outage.js';

describe('DatabaseOutage', () => {
  let now: number;
  const outage = () => new DatabaseOutage(30_000, () => now);
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

  it('starts over after a round in which the database answered', () => {
    const o = outage();
    expect(o.withinGrace(true)).toBe(true);
    now += 40_000;
    expect(o.withinGrace(true)).toBe(false);
    expect(o.withinGrace(false)).toBe(false);
    now += 1_000;
    expect(o.withinGrace(true)).toBe(true);
    now += 29_999;
    expect(o.withinGrace(true)).toBe(true);
  });

  it('with no grace, is never within it', () => {
    const o = new DatabaseOutage(0, () => now);
    expect(o.withinGrace(true)).toBe(false);
  });
});
