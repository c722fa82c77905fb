import { IntervalThrottle } from '../../common/interval-throttle.js';

/** A problem repeated every batch is reported once, then at most once per interval with how often it recurred. */
export function throttledReport(write: (message: string) => void, intervalMs: number, now?: () => number) {
  const reported = new IntervalThrottle<'report'>({ intervalMs, maxKeys: 1, now });
  let heldBack = 0;
  return (message: string): void => {
    if (!reported.admit('report')) {
      heldBack += 1;
      return;
    }
    write(heldBack > 0 ? `${message} (${heldBack} more since the last report)` : message);
    heldBack = 0;
  };
}
