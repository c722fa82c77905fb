import { Injectable, Logger } from '@nestjs/common';
import { IntervalThrottle } from '../../common/interval-throttle.js';

export const EXPIRY_WARNING_WINDOW_MS = 7 * 86_400_000;
export const EXPIRY_WARNING_INTERVAL_MS = 86_400_000;

function remaining(ms: number): string {
  const hours = Math.floor(ms / 3_600_000);
  if (hours >= 48) return `${Math.floor(hours / 24)} days`;
  if (hours >= 1) return `${hours} h`;
  return `${Math.max(1, Math.ceil(ms / 60_000))} min`;
}

/** One warn line per key per day (per instance) while the key is used in its last EXPIRY_WARNING_WINDOW_MS. */
@Injectable()
export class ExpiryWarnings {
  private readonly logger = new Logger('ApiKeyExpiry');
  private readonly warned = new IntervalThrottle<string>({ intervalMs: EXPIRY_WARNING_INTERVAL_MS, maxKeys: 10_000 });

  check(id: string, expiresAt: number, now: number, replacedBy: string | null): void {
    if (expiresAt - now > EXPIRY_WARNING_WINDOW_MS || !this.warned.admit(id)) return;
    const todo =
      replacedBy === null
        ? `rotate it with a new lifetime (npm run apikey -- rotate ${id} --expires-in <N>d; without --expires-in the new key expires with this one) and hand its clients the new key before they are refused.`
        : `it was replaced by key ${replacedBy}: move its clients to the new key before they are refused.`;
    this.logger.warn(
      `API key ${id} was used and expires at ${new Date(expiresAt).toISOString()} (in ${remaining(expiresAt - now)}): ` +
        `${todo} Logged once a day per key and instance.`,
    );
  }
}
