import { Injectable, Logger } from '@nestjs/common';

/** Why each failing check failed, in one line: `database: timeout of 1000ms exceeded; migrations: 1 pending migration(s)`. */
export function notReadyReason(failed: Record<string, { status: string; message?: unknown }>): string {
  const reasons = Object.entries(failed).map(([check, { message }]) => {
    return `${check}: ${typeof message === 'string' && message ? message : 'down'}`;
  });
  return reasons.join('; ') || 'a check failed';
}

/** Logs readiness when it changes, one line each time, instead of a stack on every probe. */
@Injectable()
export class ReadinessLog {
  private readonly logger = new Logger('Readiness');
  private last: { ready: boolean; reason: string } | undefined;

  record(ready: true): void;
  record(ready: false, reason: string): void;
  record(ready: boolean, reason = ''): void {
    if (this.last?.ready === ready && this.last.reason === reason) return;
    if (ready) this.logger.log(this.last ? 'Ready again' : 'Ready');
    else this.logger.warn(`Not ready: ${reason}`);
    this.last = { ready, reason };
  }
}
