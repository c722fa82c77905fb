import { DynamicModule, Global, Module } from '@nestjs/common';
import type { AppConfig } from './app-config.js';

/** Injection token of the typed configuration: `@Inject(APP_CONFIG) config: AppConfig`. */
export const APP_CONFIG = Symbol('AppConfig');

/**
 * The configuration as the application runs with it: what `readConfig()` read, with the database the
 * entry point resolved (or a test's overrides).
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
