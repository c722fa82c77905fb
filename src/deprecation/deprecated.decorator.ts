import { applyDecorators, Injectable, Logger, SetMetadata, UseInterceptors } from '@nestjs/common';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExtension, ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Counter, Registry } from 'prom-client';
import type { Observable } from 'rxjs';
import type { AuthenticatedRequest } from '../auth/api-key-identity.js';
import { IntervalThrottle } from '../common/interval-throttle.js';

/** `operationId` as the OpenAPI document, logs and metrics name it; `advice`, what to call instead, for the document. */
export interface DeprecationPolicy {
  operationId: string;
  since: Date;
  sunset: Date;
  successor: string;
  advice: string;
}

export const DEPRECATION_POLICY = Symbol('deprecation-policy');

/** Carries the headers to the OpenAPI document's build, which documents them on each response and removes it. */
export const DEPRECATION_HEADERS_EXTENSION = 'x-deprecation-headers';

/** A key's calls are logged once per interval (every one is counted): a line per call would double the log volume. */
export const DEPRECATION_LOG_INTERVAL_MS = 10 * 60_000;

/** RFC 9745's date in seconds, RFC 8594's HTTP-date, the successor. */
export function deprecationHeaders(policy: DeprecationPolicy): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(policy.since.getTime() / 1000)}`,
    Sunset: policy.sunset.toUTCString(),
    Link: `<${policy.successor}>; rel="successor-version"`,
  };
}

/** Sets the headers before the handler runs (errors carry them too); per operation, its state is made on its first call. */
@Injectable()
export class DeprecationInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Deprecation');
  private readonly calls: Counter<'operation'>;
  private readonly operations = new WeakMap<
    object,
    { headers: Record<string, string>; operationId: string; calls: Counter.Internal; logged: IntervalThrottle<string> }
  >();

  constructor(
    private readonly reflector: Reflector,
    registry: Registry,
  ) {
    this.calls = new Counter({
      name: 'animal_store_deprecated_calls_total',
      help: 'Calls to deprecated operations, by operation (no key label, whose values would grow with the keys: the "Deprecation" log lines name each caller).',
      labelNames: ['operation'],
      registers: [registry],
    });
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    let operation = this.operations.get(handler);
    if (!operation) {
      const policy = this.reflector.get<DeprecationPolicy | undefined>(DEPRECATION_POLICY, handler);
      if (!policy) return next.handle();
      operation = {
        headers: deprecationHeaders(policy),
        operationId: policy.operationId,
        calls: this.calls.labels({ operation: policy.operationId }),
        // Past maxKeys, the key logged longest ago may be logged again within the interval.
        logged: new IntervalThrottle({ intervalMs: DEPRECATION_LOG_INTERVAL_MS, maxKeys: 10_000 }),
      };
      this.operations.set(handler, operation);
    }
    const http = context.switchToHttp();
    http.getResponse<FastifyReply>().headers(operation.headers);
    const request = http.getRequest<AuthenticatedRequest>();
    const keyId = request.user?.id ?? 'unknown';
    operation.calls.inc();
    if (operation.logged.admit(keyId)) {
      this.logger.warn(
        { reqId: request.id, operation: operation.operationId, keyId },
        `Deprecated operation ${operation.operationId} called by API key ${keyId} (logged once per key every ${DEPRECATION_LOG_INTERVAL_MS / 60_000} minutes; every call is counted in animal_store_deprecated_calls_total)`,
      );
    }
    return next.handle();
  }
}

// Deprecates a route: the headers on each response, a warning per key and interval, and in the OpenAPI document
// `deprecated`, the removal date and the policy's advice (`summary: undefined` keeps the route's own).
export const Deprecated = (policy: DeprecationPolicy) =>
  applyDecorators(
    SetMetadata(DEPRECATION_POLICY, policy),
    UseInterceptors(DeprecationInterceptor),
    ApiOperation({
      operationId: policy.operationId,
      summary: undefined,
      deprecated: true,
      description: `Deprecated: announced for removal on ${policy.sunset.toLocaleDateString('en-GB', { dateStyle: 'long', timeZone: 'UTC' })}. ${policy.advice}`,
    }),
    ApiExtension(DEPRECATION_HEADERS_EXTENSION, deprecationHeaders(policy)),
  );
