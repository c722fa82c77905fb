/** The most an instance's grace exceeds the setting by, as a share of it: a fleet's instances then turn unready apart. */
export const OUTAGE_GRACE_JITTER = 0.2;

/**
 * How long the database has been unreachable, as the readiness rounds see it (docs/operating.md, "Readiness during
 * database faults"). The outage ends only once the database has answered every round for the whole setting: a
 * flapping path is one outage, not a new one at each passing round.
 */
export class DatabaseOutage {
  /** READINESS_OUTAGE_GRACE_MS (`recoveryMs`), and up to OUTAGE_GRACE_JITTER more, by `jitter` (0 to 1). */
  private readonly graceMs: number;
  private since: number | null = null;
  private answeringSince: number | null = null;

  constructor(
    private readonly recoveryMs: number,
    private readonly now: () => number = Date.now,
    jitter = Math.random(),
  ) {
    this.graceMs = recoveryMs * (1 + OUTAGE_GRACE_JITTER * jitter);
  }

  /** Records a round; true while an outage is younger than the grace (the instance stays ready). */
  withinGrace(unreachable: boolean): boolean {
    const now = this.now();
    if (!unreachable) {
      this.answeringSince ??= now;
      if (now - this.answeringSince >= this.recoveryMs) this.since = null;
      return false;
    }
    this.answeringSince = null;
    this.since ??= now;
    return now - this.since < this.graceMs;
  }
}
