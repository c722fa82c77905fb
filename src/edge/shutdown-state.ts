import { Injectable } from '@nestjs/common';

/** Whether the process has been asked to stop; readiness reads it, the signal handler sets it. */
@Injectable()
export class ShutdownState {
  private shuttingDown = false;

  begin(): void {
    this.shuttingDown = true;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }
}
