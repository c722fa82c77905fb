/**
 * The yardstick the service's targets are set against, not part of the product: the three routes (plus create)
 * written the straightforward way (bench/straightforward-pets.ts), as a user would write them instead of the
 * service, with a plain synchronous guard that looks the bearer key up in a set and Nest's default JSON
 * serialisation and error bodies. No logs, metrics, limits, cursors, deprecation headers or V8 settings.
 */
import 'reflect-metadata';
import {
  CanActivate,
  ExecutionContext,
  Injectable,
  Module,
  UnauthorizedException,
  ValidationPipe,
} from '@nestjs/common';
import { APP_GUARD, APP_PIPE } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { serveNest } from './nest-yardstick.js';
import { PET_DATABASE, PET_VALIDATION, petsController } from './straightforward-pets.js';
import { API_KEYS } from './yardstick-pets.js';

@Injectable()
class ApiKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
    if (header?.startsWith('Bearer ') && API_KEYS.has(header.slice(7))) return true;
    throw new UnauthorizedException();
  }
}

@Module({
  imports: PET_DATABASE,
  controllers: [petsController()],
  providers: [
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_PIPE, useValue: new ValidationPipe(PET_VALIDATION) },
  ],
})
class StraightforwardAppModule {}

await serveNest(StraightforwardAppModule);
