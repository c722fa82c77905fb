import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ShutdownState } from '../lifecycle/shutdown-state.js';
import { HealthController } from './health.controller.js';
import { MigrationsHealthIndicator } from './migrations.health.js';

@Module({
  // A failing probe already answers 503 and the global filter logs it; terminus' own log would repeat it.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [MigrationsHealthIndicator, ShutdownState],
  exports: [ShutdownState],
})
export class HealthModule {}
