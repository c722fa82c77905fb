import { CanActivate, Controller, ExecutionContext, Get, Header, Inject, Injectable, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { Registry } from 'prom-client';
import { bearerToken } from '../../auth/bearer-token.js';
import { keyDigest } from '../../auth/key-digest.js';
import { Public } from '../../auth/public.decorator.js';
import { AuthFailureLimiter } from '../../auth/rate-limit/auth-failure-limiter.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { ApiError } from '../../edge/errors/api-error.js';
import { ErrorCode } from '../../edge/errors/error-code.js';
import { bearerChallenge } from '../../edge/http.constants.js';
import { OPERATIONS_ROUTES } from '../operations-routes.js';

/** `Authorization: Bearer <METRICS_TOKEN>` when one is configured (docs/operating.md, "Metrics"). */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly digest: Buffer | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly authFailures: AuthFailureLimiter,
  ) {
    this.digest = config.metricsToken ? Buffer.from(keyDigest(config.metricsToken), 'hex') : null;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.digest) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const token = bearerToken(request.headers.authorization);
    // Digests have one length, so the comparison is constant-time whatever was presented.
    if (token !== null && timingSafeEqual(Buffer.from(keyDigest(token), 'hex'), this.digest)) return true;
    if (token !== null) {
      if (this.authFailures.isBlocked(request.ip)) throw this.authFailures.refusal(request.ip);
      await this.authFailures.recordFailure(request.ip);
    }
    throw new ApiError(401, ErrorCode.Unauthorized, 'The metrics token is missing or not valid.', {
      'WWW-Authenticate': bearerChallenge({ realm: 'metrics' }),
    });
  }
}

/** Prometheus scrape endpoint: no API key, its own optional METRICS_TOKEN instead. */
@ApiExcludeController()
@Public()
@UseGuards(MetricsTokenGuard)
@Controller()
export class MetricsController {
  constructor(private readonly registry: Registry) {}

  @Get(OPERATIONS_ROUTES.metrics)
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
