import { DynamicModule, Global, Injectable, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RateLimitModule } from '../../auth/rate-limit/rate-limit.module.js';
import type { AppConfig } from '../../config/app-config.js';
import { OPERATIONS_ROUTES } from '../operations-routes.js';
import { MetricsTokenStrategy } from './metrics-token.strategy.js';
import { MetricsController } from './metrics.controller.js';

/** Says once, at start, why `/metrics` is not served and how to serve it. */
@Injectable()
class MetricsClosedWarning implements OnApplicationBootstrap {
  onApplicationBootstrap(): void {
    new Logger('Metrics').warn(
      `/${OPERATIONS_ROUTES.metrics} is not served: NODE_ENV=production without METRICS_TOKEN. To scrape it, set ` +
        'METRICS_TOKEN to a random token (e.g. `openssl rand -base64 32`) and send `Authorization: Bearer <token>`.',
    );
  }
}

/**
 * Global, so that any feature can record into the one registry. Production serves `/metrics` only behind
 * METRICS_TOKEN, else answers it as any unknown path (404): key ids and process details are nobody else's business.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(config: Pick<AppConfig, 'production' | 'metricsToken'>): DynamicModule {
    const served = !config.production || config.metricsToken !== undefined;
    return {
      module: MetricsModule,
      // The metrics token's failures count against API keys' per-address budget.
      imports: [RateLimitModule],
      controllers: served ? [MetricsController] : [],
      providers: [
        {
          // The application's own registry, so that several apps in one test process never clash.
          provide: Registry,
          useFactory: () => {
            const registry = new Registry();
            collectDefaultMetrics({ register: registry });
            return registry;
          },
        },
        ...(served ? [MetricsTokenStrategy] : [MetricsClosedWarning]),
      ],
      exports: [Registry],
    };
  }
}
