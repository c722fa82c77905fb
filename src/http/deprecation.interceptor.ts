import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import type { ApiKeyIdentity } from '../auth/api-key-identity.js';

export interface DeprecationPolicy {
  /** When the operation became deprecated. */
  since: Date;
  /** When it is announced to be removed. */
  sunset: Date;
  /** The URL clients should move to. */
  successor: string;
}

export const DEPRECATION_POLICY = Symbol('deprecation-policy');

/** The response headers a policy calls for, computed once per route. */
export function deprecationHeaders(policy: DeprecationPolicy): Record<string, string> {
  return {
    // RFC 9745: a structured-field date, seconds since the epoch.
    Deprecation: `@${Math.floor(policy.since.getTime() / 1000)}`,
    // RFC 8594: an HTTP-date.
    Sunset: policy.sunset.toUTCString(),
    Link: `<${policy.successor}>; rel="successor-version"`,
  };
}

/**
 * Marks every response of a deprecated operation (errors included, since the
 * headers are set before the handler runs) and logs who still calls it.
 */
@Injectable()
export class DeprecationInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Deprecation');
  private readonly headers = new WeakMap<object, Record<string, string>>();

  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    let headers = this.headers.get(handler);
    if (!headers) {
      const policy = this.reflector.get<DeprecationPolicy | undefined>(DEPRECATION_POLICY, handler);
      headers = policy ? deprecationHeaders(policy) : {};
      this.headers.set(handler, headers);
    }

    const http = context.switchToHttp();
    http.getResponse<FastifyReply>().headers(headers);
    const request = http.getRequest<FastifyRequest & { user?: ApiKeyIdentity }>();
    this.logger.warn(
      `Deprecated operation ${request.method} ${request.routeOptions.url} called by API key ${request.user?.id ?? 'unknown'}`,
    );
    return next.handle();
  }
}
