import { DynamicModule, Injectable, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import type { AuthenticatedRequest } from '../../auth/api-key-identity.js';
import type { AppConfig } from '../../config/app-config.js';
import { loggerParams } from './logger-params.js';

/** One log line per request, written when the response is done: what was called, by whom, how it ended. */
@Injectable()
export class RequestLogHook implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly pino: PinoLogger,
  ) {}

  onModuleInit(): void {
    // Outside any request, this is nestjs-pino's root logger; the line carries its own reqId.
    const log = this.pino.logger;
    this.adapterHost.httpAdapter.getInstance<FastifyInstance>().addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      log[status >= 500 ? 'warn' : 'info'](
        {
          reqId: request.id,
          method: request.method,
          route: request.routeOptions.url ?? null,
          status,
          durationMs: Math.round(reply.elapsedTime * 100) / 100,
          keyId: (request as AuthenticatedRequest).user?.id ?? null,
        },
        'request completed',
      );
      done();
    });
  }
}

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
