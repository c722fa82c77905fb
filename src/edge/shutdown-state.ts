import { Global, Injectable, Module } from '@nestjs/common';

/** Whether the process has been asked to stop; readiness reads it, the signal handler sets it. */
@Injectable()
export class ShutdownState {
  isShuttingDown = false;

  begin(): void {
    this.isShuttingDown = true;
  }
}

@Global()
@Module({ providers: [ShutdownState], exports: [ShutdownState] })
export class ShutdownModule {}
