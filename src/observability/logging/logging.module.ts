import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { AppConfig } from '../../config/app-config.js';
import { loggerParams } from './logger-params.js';
import { RequestLogHook } from './request-log.hook.js';

@Module({})
export class LoggingModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: LoggingModule,
      imports: [LoggerModule.forRoot(loggerParams(config))],
      providers: [RequestLogHook],
    };
  }
}
