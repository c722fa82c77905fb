import { Logger } from '@nestjs/common';

/** Why each failing check failed, in one line (`database: timeout of 1000ms exceeded; migrations: …`); none: ''. */
export function notReadyReason(checks: Record<string, { status: string; message?: unknown }>): string {
  const failed = Object.entries(checks).filter(([, { status }]) => status === 'down');
  return failed
    .map(([check, { message }]) => `${check}: ${typeof message === 'string' && message ? message : 'down'}`)
    .join('; ');
}

/** Logs readiness when it changes, one line each time, instead of a stack on every probe. */
export class ReadinessLog {
  private readonly logger = new Logger('Readiness');
  private last: { ready: boolean; reason: string } | undefined;

  record(ready: boolean, reason = ''): void {
    if (this.last?.ready === ready && this.last.reason === reason) return;
    if (ready) this.logger.log(this.last ? 'Ready again' : 'Ready');
    else this.logger.warn(`Not ready: ${reason}`);
    this.last = { ready, reason };
  }
}
