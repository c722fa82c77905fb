import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller.js';
import { ReadinessRound } from './readiness-round.js';

@Module({
  // ReadinessLog, not terminus's stack on every failing probe.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [ReadinessRound],
})
export class HealthModule {}
