/**
 * What the NestJS yardsticks (straightforward-app.ts, feature-equal-app.ts, nest-floor.ts) share: how they start
 * (Fastify, the `/v1` prefix), the `@nestjs/passport` bearer guard, the Error filter and the deprecation headers of
 * get by id.
 */
import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  Injectable,
  Logger,
  type LoggerService,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { Strategy } from 'passport-http-bearer';
import { API_KEYS } from './yardstick-pets.js';

/** The service's body limit (src/edge/http.constants.ts). */
const BODY_LIMIT_BYTES = 16 * 1024;

export interface ServeOptions {
  /** Added to the Fastify adapter's options. */
  adapter?: FastifyServerOptions;
  /** Nest's logger (none by default); with one, Nest buffers its start-up lines until `logger` takes over. */
  logger?: (app: NestFastifyApplication) => LoggerService;
  /** Runs before the routes are registered: Fastify plugins and hooks. */
  configure?: (app: NestFastifyApplication) => Promise<void>;
  afterClose?: () => Promise<void>;
}

/** Serves `module` on PORT, on 127.0.0.1, until SIGTERM; then closes the app and runs `afterClose`. */
export async function serveNest(module: Type, options: ServeOptions = {}): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    module,
    new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES, ...options.adapter }),
    options.logger ? { bufferLogs: true } : { logger: false },
  );
  if (options.logger) app.useLogger(options.logger(app));
  app.setGlobalPrefix('v1');
  await options.configure?.(app);
  await app.listen(Number(process.env.PORT), '127.0.0.1');
  process.once('SIGTERM', () => void app.close().then(options.afterClose));
}

/** Who is calling, as the bearer strategy leaves it on `request.user`. */
export interface Caller {
  id: string;
}

export type CallerRequest = FastifyRequest & { user?: Caller };

/** passport-http-bearer, keys in the in-memory set of API_KEYS; the caller is named by the key's position. */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  private readonly callers = new Map([...API_KEYS].map((key, i): [string, Caller] => [key, { id: `key-${i + 1}` }]));

  validate(token: string): Caller | false {
    return this.callers.get(token) ?? false;
  }
}

/** The global guard: `@nestjs/passport`'s AuthGuard with the bearer strategy (register BearerStrategy beside it). */
@Injectable()
export class BearerGuard extends AuthGuard('bearer') {}

/** The service's Error codes (docs/contract.md) for the statuses the yardsticks can answer. */
const CODES: Record<number, string> = {
  400: 'validation_failed',
  401: 'unauthorized',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
};

/** Every error as `{ code, message, status }`; failures of its own (5xx) are logged with their stack. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorFilter');

  catch(error: unknown, host: ArgumentsHost): void {
    const status = error instanceof HttpException ? error.getStatus() : 500;
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    if (status >= 500) this.logger.error(error, `${request.method} ${request.url} failed`);
    // ValidationPipe's messages are in the exception's response.
    const detail = error instanceof HttpException ? (error.getResponse() as { message?: unknown }).message : undefined;
    const message =
      status >= 500 || !(error instanceof Error)
        ? 'The request failed.'
        : Array.isArray(detail)
          ? detail.join('; ')
          : error.message;
    void host
      .switchToHttp()
      .getResponse<FastifyReply>()
      .code(status)
      .send({ code: CODES[status] ?? 'error', message, status });
  }
}

/** The headers the service's deprecated get by id answers with (src/pets/pets.controller.ts, GET_PET_DEPRECATION). */
export const DEPRECATION_HEADERS = {
  Deprecation: '@1795132800',
  Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  Link: '</v1/pets>; rel="successor-version"',
} as const;
