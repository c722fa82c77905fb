/** The most an instance's grace exceeds the setting by, as a share of it: a fleet's instances then turn unready apart. */
export const OUTAGE_GRACE_JITTER = 0.2;
/** Taken out when this share of its rounds over the grace failed: its own path is broken, or the database is gone. */
export const OUT_SHARE = 0.8;
/** Back in once under this share of its rounds over the recovery period failed: most of its requests succeed. */
export const BACK_SHARE = 0.5;

/** `riding-out`: a failed round while in (still ready, checks degraded); `recovering`: a passing one while out. */
type OutageState = 'ready' | 'riding-out' | 'out' | 'recovering';

/**
 * Whether the database's faults take the instance out, by the share of rounds that failed over a window
 * (docs/operating.md, "Readiness during database faults"): a database that stalls now and then keeps the fleet in.
 */
export class DatabaseOutage {
  /** READINESS_OUTAGE_GRACE_MS, and up to OUTAGE_GRACE_JITTER more, by `jitter` (0 to 1). */
  private readonly graceMs: number;
  private readonly rounds: { at: number; failed: boolean }[] = [];
  private firstAt: number | null = null;
  /** When the instance went out (null: in): the back window counts any time before it as failed. */
  private outSince: number | null = null;

  constructor(
    graceMs: number,
    /** READINESS_RECOVERY_MS */
    private readonly recoveryMs: number,
    private readonly now: () => number = Date.now,
    jitter = Math.random(),
  ) {
    this.graceMs = graceMs * (1 + OUTAGE_GRACE_JITTER * jitter);
  }

  record(unreachable: boolean): OutageState {
    const now = this.now();
    this.firstAt ??= now;
    this.rounds.push({ at: now, failed: unreachable });
    // Windows sized so that a database gone altogether takes the instance out after the grace, and one back for
    // good brings it in after the recovery period, as when every round had to fail or pass.
    const outWindow = this.graceMs / OUT_SHARE;
    const backWindow = this.recoveryMs / BACK_SHARE;
    while (this.rounds.length > 1 && now - this.rounds[1].at >= Math.max(outWindow, backWindow)) this.rounds.shift();
    if (this.outSince !== null) {
      if (this.failedShare(now, backWindow, this.outSince) < BACK_SHARE) this.outSince = null;
    } else if (now - this.firstAt >= this.graceMs && this.failedShare(now, outWindow) >= OUT_SHARE) {
      this.outSince = now;
    }
    if (this.outSince !== null) return unreachable ? 'out' : 'recovering';
    return unreachable ? 'riding-out' : 'ready';
  }

  /**
   * Each round's answer holds until the next. Time before `failedUntil` counts as failed: the passing rounds before an
   * outage never bring back an instance it took out (a grace shorter than the recovery window would flap).
   */
  private failedShare(now: number, windowMs: number, failedUntil = -Infinity): number {
    if (windowMs === 0) return this.rounds[this.rounds.length - 1].failed ? 1 : 0;
    const start = Math.max(now - windowMs, failedUntil);
    let failed = Math.max(0, start - (now - windowMs));
    this.rounds.forEach((round, i) => {
      if (round.failed) failed += Math.max(0, (this.rounds[i + 1]?.at ?? now) - Math.max(round.at, start));
    });
    return failed / windowMs;
  }
}
