import { Global, Module } from '@nestjs/common';
import { DatabaseFaultCounter } from '../../database/database-fault-log.js';
import { DeprecatedCallCounter } from '../../deprecation/deprecation.interceptor.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { MetricsService } from './metrics.service.js';

/** Global so that any feature (the deprecation interceptor, for one) can record into the one registry. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [
    MetricsService,
    MetricsTokenGuard,
    { provide: DeprecatedCallCounter, useExisting: MetricsService },
    { provide: DatabaseFaultCounter, useExisting: MetricsService },
  ],
  exports: [MetricsService, DeprecatedCallCounter, DatabaseFaultCounter],
})
export class MetricsModule {}
