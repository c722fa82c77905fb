import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ShutdownState } from '../../http/shutdown-state.js';
import { HealthController } from './health.controller.js';
import { MigrationsHealthIndicator } from './migrations.health.js';

@Module({
  // Terminus logs which check failed; the 503 itself goes through the global filter like any error.
  imports: [TerminusModule],
  controllers: [HealthController],
  providers: [MigrationsHealthIndicator, ShutdownState],
  exports: [ShutdownState],
})
export class HealthModule {}
