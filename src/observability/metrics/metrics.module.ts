import { Global, Module } from '@nestjs/common';
import { RateLimitStorageGauge } from '../../auth/rate-limit/rate-limit-storage-gauge.js';
import { RateLimitModule } from '../../auth/rate-limit/rate-limit.module.js';
import { DeprecatedCallCounter } from '../../deprecation/deprecation.interceptor.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { MetricsService } from './metrics.service.js';

/** Global so that any feature (the deprecation interceptor, for one) can record into the one registry. */
@Global()
@Module({
  // The metrics token's failures count against the same per-address budget as API keys'.
  imports: [RateLimitModule],
  controllers: [MetricsController],
  providers: [
    MetricsService,
    MetricsTokenGuard,
    { provide: DeprecatedCallCounter, useExisting: MetricsService },
    { provide: RateLimitStorageGauge, useExisting: MetricsService },
  ],
  exports: [MetricsService, DeprecatedCallCounter, RateLimitStorageGauge],
})
export class MetricsModule {}
