/** The most an instance's grace exceeds the setting by, as a share of it: a fleet's instances then turn unready apart. */
export const OUTAGE_GRACE_JITTER = 0.2;

/**
 * What a round means for readiness: `ready`; `riding-out` an outage younger than the grace (still ready, the checks
 * degraded); `out` past the grace; `recovering`: the database answers again after an outage that took the instance
 * out, but not yet for the whole recovery period.
 */
type OutageState = 'ready' | 'riding-out' | 'out' | 'recovering';

/**
 * How long the database has been unreachable, as the readiness rounds see it (docs/operating.md, "Readiness during
 * database faults"). The outage ends only once the database has answered every round for the recovery period: a
 * flapping path is one outage, and an instance it took out stays out until the path holds.
 */
export class DatabaseOutage {
  /** READINESS_OUTAGE_GRACE_MS, and up to OUTAGE_GRACE_JITTER more, by `jitter` (0 to 1). */
  private readonly graceMs: number;
  private since: number | null = null;
  private answeringSince: number | null = null;
  private takenOut = false;

  constructor(
    graceMs: number,
    /** READINESS_RECOVERY_MS */
    private readonly recoveryMs: number,
    private readonly now: () => number = Date.now,
    jitter = Math.random(),
  ) {
    this.graceMs = graceMs * (1 + OUTAGE_GRACE_JITTER * jitter);
  }

  /** Records a round: whether the database was unreachable in it. */
  record(unreachable: boolean): OutageState {
    const now = this.now();
    if (!unreachable) {
      this.answeringSince ??= now;
      if (now - this.answeringSince >= this.recoveryMs) {
        this.since = null;
        this.takenOut = false;
      }
      return this.takenOut ? 'recovering' : 'ready';
    }
    this.answeringSince = null;
    this.since ??= now;
    if (now - this.since < this.graceMs) return 'riding-out';
    this.takenOut = true;
    return 'out';
  }
}
