import { IntervalThrottle } from '../../common/interval-throttle.js';

/** A problem repeated every batch is reported once, then at most once per interval with how often it recurred. */
export class ThrottledReport {
  private readonly reported: IntervalThrottle<'report'>;
  private heldBack = 0;

  constructor(
    private readonly write: (message: string) => void,
    intervalMs: number,
    now?: () => number,
  ) {
    this.reported = new IntervalThrottle({ intervalMs, maxKeys: 1, now });
  }

  report(message: string): void {
    if (!this.reported.admit('report')) {
      this.heldBack += 1;
      return;
    }
    this.write(this.heldBack > 0 ? `${message} (${this.heldBack} more since the last report)` : message);
    this.heldBack = 0;
  }
}
