import { DynamicModule, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { AuthModule } from './auth/auth.module.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { GracefulShutdown, ShutdownModule } from './edge/shutdown-state.js';
import { HealthModule } from './observability/health/health.module.js';
import { ApiErrorFilter } from './edge/errors/api-error.filter.js';
import { RequestValidationPipe } from './edge/request-validation.pipe.js';
import { loggerParams } from './observability/logging/logger-params.js';
import { MetricsModule } from './observability/metrics/metrics.module.js';
import { PetsModule } from './pets/pets.module.js';
import { stopTracing } from './observability/tracing/tracing-state.js';

@Module({})
export class AppModule implements OnApplicationShutdown {
  /** On a signal, once the application is closed, the spans still queued leave (app.close() alone keeps tracing). */
  async onApplicationShutdown(signal?: string): Promise<void> {
    if (signal) await stopTracing();
  }

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(loggerParams(config)),
        DatabaseModule.forRoot(config),
        ShutdownModule,
        AuthModule,
        PetsModule,
        HealthModule,
        MetricsModule.forRoot(config),
      ],
      providers: [
        GracefulShutdown,
        { provide: APP_PIPE, useClass: RequestValidationPipe },
        { provide: APP_FILTER, useClass: ApiErrorFilter },
      ],
    };
  }
}
