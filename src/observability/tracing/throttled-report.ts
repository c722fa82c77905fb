/**
 * A problem that may repeat for every batch (the collector down, the queue full) is reported once, then at most
 * once per interval with how many times it happened since, so that the log never gets a line per batch.
 */
export class ThrottledReport {
  private lastReportAt = -Infinity;
  private since = 0;

  constructor(
    private readonly write: (message: string) => void,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  report(message: string): void {
    this.since += 1;
    const now = this.now();
    if (now - this.lastReportAt < this.intervalMs) return;
    const repeats = this.since - 1;
    this.write(repeats > 0 ? `${message} (${repeats} more since the last report)` : message);
    this.lastReportAt = now;
    this.since = 0;
  }
}
