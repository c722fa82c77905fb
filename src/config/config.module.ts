import type { DynamicModule } from '@nestjs/common';
import type { AppConfig } from './app-config.js';

export const APP_CONFIG = Symbol('AppConfig');

export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    const providers = [{ provide: APP_CONFIG, useValue: config }];
    return { global: true, module: ConfigModule, providers, exports: [APP_CONFIG] };
  }
}
