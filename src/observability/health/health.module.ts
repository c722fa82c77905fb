import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { APP_CONFIG } from '../../config/config.module.js';
import type { AppConfig } from '../../config/app-config.js';
import { ShutdownState } from '../../edge/shutdown-state.js';
import { DatabaseOutage } from './database-outage.js';
import { HealthController } from './health.controller.js';
import { ReadinessLog } from './readiness-log.js';
import { ReadinessRound } from './readiness-round.js';

@Module({
  // ReadinessLog, not terminus's stack on every failing probe.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [
    ReadinessRound,
    ShutdownState,
    ReadinessLog,
    {
      provide: DatabaseOutage,
      useFactory: (config: AppConfig) => new DatabaseOutage(config.readinessOutageGraceMs),
      inject: [APP_CONFIG],
    },
  ],
  exports: [ShutdownState],
})
export class HealthModule {}
