import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { keyDigest } from '../../auth/key-digest.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { ApiError } from '../../edge/errors/api-error.js';
import { ErrorCode } from '../../edge/errors/error-code.js';

/** `/metrics` answers only to `Authorization: Bearer <METRICS_TOKEN>` when that token is configured. */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly digest: Buffer | null;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.digest = config.metricsToken ? Buffer.from(keyDigest(config.metricsToken), 'hex') : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.digest) return true;
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization ?? '';
    const token = /^Bearer (\S+)$/i.exec(header)?.[1];
    // Digests have one length, so the comparison is constant-time whatever was presented.
    if (token && timingSafeEqual(Buffer.from(keyDigest(token), 'hex'), this.digest)) return true;
    throw new ApiError(401, ErrorCode.Unauthorized, 'The metrics token is missing or not valid.', {
      'WWW-Authenticate': 'Bearer realm="metrics"',
    });
  }
}
