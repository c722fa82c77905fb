import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { Observable } from 'rxjs';
import type { AuthenticatedRequest } from '../auth/api-key-identity.js';
import { IntervalThrottle } from '../common/interval-throttle.js';

export interface DeprecationPolicy {
  /** When the operation became deprecated. */
  since: Date;
  /** When it is announced to be removed. */
  sunset: Date;
  /** The URL clients should move to. */
  successor: string;
}

export const DEPRECATION_POLICY = Symbol('deprecation-policy');

/** Counts who still calls a deprecated operation; the metrics module provides it under this token. */
export abstract class DeprecatedCallCounter {
  abstract recordDeprecatedCall(operationId: string, keyId: string): void;
}

/**
 * A key's calls to a deprecated operation are logged once per this interval (every call is counted in metrics):
 * a line per call would double the log volume of the operation and say nothing new.
 */
export const DEPRECATION_LOG_INTERVAL_MS = 10 * 60_000;
/** Keys remembered at once per operation; past it, the key logged longest ago may be logged again within the interval. */
const DEPRECATION_LOG_MAX_KEYS = 10_000;

// Where @nestjs/swagger's @ApiOperation keeps its options (not exported by the package).
const API_OPERATION_METADATA = 'swagger/apiOperation';

/** What the interceptor keeps per deprecated handler. */
interface DeprecatedOperation {
  headers: Record<string, string>;
  operationId: string;
  /** The API key ids logged within the interval. */
  logged: IntervalThrottle<string>;
}

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
 * headers are set before the handler runs), counts every call by key, and logs each key's first call per
 * DEPRECATION_LOG_INTERVAL_MS.
 */
@Injectable()
export class DeprecationInterceptor implements NestInterceptor {
  private readonly logger: Pino;
  private readonly operations = new WeakMap<object, DeprecatedOperation>();

  constructor(
    private readonly reflector: Reflector,
    private readonly metrics: DeprecatedCallCounter,
    pino: PinoLogger,
  ) {
    this.logger = pino.logger.child({ context: 'Deprecation' });
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    let operation = this.operations.get(handler);
    if (!operation) {
      const policy = this.reflector.get<DeprecationPolicy | undefined>(DEPRECATION_POLICY, handler);
      const apiOperation = this.reflector.get<{ operationId?: string } | undefined>(API_OPERATION_METADATA, handler);
      operation = {
        headers: policy ? deprecationHeaders(policy) : {},
        operationId: apiOperation?.operationId ?? handler.name,
        logged: new IntervalThrottle({ intervalMs: DEPRECATION_LOG_INTERVAL_MS, maxKeys: DEPRECATION_LOG_MAX_KEYS }),
      };
      this.operations.set(handler, operation);
    }

    const http = context.switchToHttp();
    http.getResponse<FastifyReply>().headers(operation.headers);
    const request = http.getRequest<AuthenticatedRequest>();
    const keyId = request.user?.id ?? 'unknown';
    this.metrics.recordDeprecatedCall(operation.operationId, keyId);
    if (operation.logged.admit(keyId)) {
      this.logger.warn(
        { reqId: request.id, operation: operation.operationId, keyId },
        `Deprecated operation ${operation.operationId} called by API key ${keyId} (logged once per key every ${DEPRECATION_LOG_INTERVAL_MS / 60_000} minutes; every call is counted in animal_store_deprecated_calls_total)`,
      );
    }
    return next.handle();
  }
}
