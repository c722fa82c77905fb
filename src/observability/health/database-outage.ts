/** The most an instance's grace exceeds the setting by, as a share of it: a fleet's instances then turn unready apart. */
export const OUTAGE_GRACE_JITTER = 0.2;

/**
 * How long the database has been unreachable, as the readiness rounds see it. Every instance loses the database
 * together in a failover; turning them all unready would empty the load balancer, whose own error carries no
 * Retry-After, and bring them back only after their probes pass again. So an instance stays ready for a bounded
 * time (docs/operating.md, "Readiness during database faults"), and one cut off alone is still taken out after it.
 *
 * The outage ends only once the database has answered every round for the whole configured grace: a path that
 * flaps (a round passes now and then among failing ones) is one outage, not a new one at each passing round.
 */
export class DatabaseOutage {
  /** This instance's own grace: the setting, and up to OUTAGE_GRACE_JITTER more, by `jitter` (0 to 1). */
  private readonly graceMs: number;
  private since: number | null = null;
  private answeringSince: number | null = null;

  constructor(
    /** The setting (READINESS_OUTAGE_GRACE_MS): also how long the database must answer for an outage to end. */
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
