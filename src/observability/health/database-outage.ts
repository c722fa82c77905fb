/**
 * How long the database has been unreachable, as the readiness checks see it. Every instance loses the database
 * together in a failover; turning them all unready would empty the load balancer, whose own error carries no
 * Retry-After, and bring them back only after their probes pass again. So an instance stays ready for a bounded
 * time (docs/operating.md, "Readiness during database faults"), and one cut off alone is still taken out after it.
 */
export class DatabaseOutage {
  private since: number | null = null;

  constructor(
    private readonly graceMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a round of checks; true while an outage is younger than the grace (the instance stays ready). */
  withinGrace(unreachable: boolean): boolean {
    if (!unreachable) {
      this.since = null;
      return false;
    }
    this.since ??= this.now();
    return this.now() - this.since < this.graceMs;
  }
}
