import { Inject, Injectable } from '@nestjs/common';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import type { StrategyCreatedStatic } from 'passport';
import { Strategy } from 'passport-http-bearer';
import { headersOnly } from '../../auth/bearer.strategy.js';
import { keyDigest } from '../../auth/key-digest.js';
import { AuthFailureLimiter, Refusal } from '../../auth/rate-limit/auth-failure-limiter.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { ApiError } from '../../edge/errors/api-error.js';
import { ErrorCode } from '../../edge/errors/error-code.js';
import { bearerChallenge } from '../../edge/http.constants.js';

const refused = () =>
  new ApiError(401, ErrorCode.Unauthorized, 'The metrics token is missing or not valid.', {
    'WWW-Authenticate': bearerChallenge({ realm: 'metrics' }),
  });

/** `Authorization: Bearer <METRICS_TOKEN>` when one is configured (docs/operating.md, "Metrics"). */
@Injectable()
export class MetricsTokenStrategy extends PassportStrategy(Strategy, 'metrics') {
  private readonly digest: Buffer | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly failures: AuthFailureLimiter,
  ) {
    super({ passReqToCallback: true });
    this.digest = config.metricsToken ? Buffer.from(keyDigest(config.metricsToken), 'hex') : null;
  }

  /** Without a token, open (development only: production then does not serve the route). */
  authenticate(request: Pick<FastifyRequest, 'headers'> & { ip?: string }, options?: object): void {
    if (this.digest) super.authenticate(headersOnly(request), options);
    else (this as unknown as StrategyCreatedStatic).success(true);
  }

  validate(request: Pick<FastifyRequest, 'ip'>, token: string): Promise<true> {
    // Digests have one length, so the comparison is constant-time whatever was presented.
    const valid = timingSafeEqual(Buffer.from(keyDigest(token), 'hex'), this.digest!);
    return this.failures.decide(request.ip, () => Promise.resolve(valid || new Refusal(refused())));
  }
}

@Injectable()
export class MetricsTokenGuard extends AuthGuard('metrics') {
  /** A missing or malformed token is answered as a wrong one, uncounted; request.user stays an API key's identity. */
  handleRequest<T>(error: Error | null, accepted: T | false): T {
    if (error || !accepted) throw error ?? refused();
    return undefined as T;
  }
}
