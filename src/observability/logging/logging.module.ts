import { DynamicModule, Injectable, Module } from '@nestjs/common';
import fp from 'fastify-plugin';
import { LoggerModule, PinoLogger } from 'nestjs-pino';
import type { AuthenticatedRequest } from '../../auth/api-key-identity.js';
import type { AppConfig } from '../../config/app-config.js';
import { loggerParams } from './logger-params.js';

/** One log line per request, written when the response is done: what was called, by whom, how it ended. */
@Injectable()
export class RequestLog {
  constructor(private readonly pino: PinoLogger) {}

  readonly plugin = fp((fastify, _options, ready) => {
    // Outside any request, this is nestjs-pino's root logger; the line carries its own reqId.
    const log = this.pino.logger;
    fastify.addHook('onResponse', (request, reply, done) => {
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
    ready();
  });
}

@Module({})
export class LoggingModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: LoggingModule,
      imports: [LoggerModule.forRoot(loggerParams(config))],
      providers: [RequestLog],
      exports: [RequestLog],
    };
  }
}
