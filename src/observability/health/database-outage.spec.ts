import { DatabaseOutage, OUTAGE_GRACE_JITTER } from './database-outage.js';

describe('DatabaseOutage', () => {
  let now: number;
  const outage = (jitter = 0) => new DatabaseOutage(30_000, 10_000, () => now, jitter);
  /** One round a second (the probes' pace), failing where `failed(second)` says; the state after each. */
  const rounds = (o: DatabaseOutage, seconds: number, failed: (second: number) => boolean) =>
    Array.from({ length: seconds }, (_, second) => {
      now += 1_000;
      return o.record(failed(second));
    });

  beforeEach(() => (now = 1_000_000));

  it('rides out a database gone altogether until the grace has passed, then takes the instance out', () => {
    const o = outage();
    rounds(o, 60, () => false);
    const states = rounds(o, 60, () => true);
    // Past the grace, within a round: the windows count rounds, both ends included.
    expect(states.indexOf('out')).toBe(30);
    expect(states.slice(0, 30)).toEqual(Array(30).fill('riding-out'));
    expect(new Set(states.slice(30))).toEqual(new Set(['out']));
  });

  it('gives each instance up to OUTAGE_GRACE_JITTER more grace, by its own jitter', () => {
    const states = rounds(outage(1), 60, () => true);
    expect(states.indexOf('out')).toBe(30 * (1 + OUTAGE_GRACE_JITTER));
  });

  it('keeps every instance in while the one database stalls, a round in three failing, however long', () => {
    const states = rounds(outage(), 600, (second) => second % 3 === 2);
    expect(new Set(states)).toEqual(new Set(['ready', 'riding-out']));
  });

  it('takes the instance out when nearly every round fails: its own path broken', () => {
    const states = rounds(outage(), 120, (second) => second % 10 !== 0);
    expect(states.slice(0, 29)).not.toContain('out');
    expect(states.slice(60)).not.toContain('ready');
  });

  it('brings an instance it took out back after the recovery period of passing rounds, and the next outage gets the whole grace', () => {
    const o = outage();
    rounds(o, 60, () => true);
    const back = rounds(o, 30, () => false);
    // The recovery period after the round that found the database back, within a round.
    expect(back.indexOf('ready')).toBe(11);
    expect(back.slice(0, 11)).toEqual(Array(11).fill('recovering'));
    rounds(o, 60, () => false);
    expect(rounds(o, 60, () => true).indexOf('out')).toBe(30);
  });

  it('keeps a path that fails most rounds out, and lets it back once under half of them fail (a stall)', () => {
    const o = outage();
    rounds(o, 60, () => true);
    expect(new Set(rounds(o, 120, (second) => second % 3 !== 0))).toEqual(new Set(['out', 'recovering']));
    expect(rounds(o, 120, (second) => second % 3 === 0).slice(60)).not.toContain('out');
  });

  it('keeps an instance out while the database stays gone, when the grace is shorter than the recovery window', () => {
    const o = new DatabaseOutage(5_000, 10_000, () => now, 0);
    rounds(o, 60, () => false);
    const states = rounds(o, 60, () => true);
    expect(states.indexOf('out')).toBe(5);
    expect(new Set(states.slice(5))).toEqual(new Set(['out']));
  });

  it('with no grace, takes the instance out at the first failed round; with no recovery period, back at the first passing one', () => {
    const o = new DatabaseOutage(0, 0, () => now);
    expect(o.record(true)).toBe('out');
    now += 1;
    expect(o.record(false)).toBe('ready');
  });
});
