import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ShutdownState } from '../../edge/shutdown-state.js';
import { DatabaseOutage } from './database-outage.js';
import { DATABASE_OUTAGE_READY_MS, HealthController } from './health.controller.js';
import { MigrationsHealthIndicator } from './migrations.health.js';
import { ReadinessLog } from './readiness-log.js';

@Module({
  // Terminus would log a stack on every failing probe; ReadinessLog logs each change of readiness once.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [
    MigrationsHealthIndicator,
    ShutdownState,
    ReadinessLog,
    { provide: DatabaseOutage, useFactory: () => new DatabaseOutage(DATABASE_OUTAGE_READY_MS) },
  ],
  exports: [ShutdownState],
})
export class HealthModule {}
