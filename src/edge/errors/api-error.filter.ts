import { ArgumentsHost, Catch, ExceptionFilter, Logger, ServiceUnavailableException } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowedMethods } from '../http.constants.js';
import { databaseFault } from '../../database/database-faults.js';
import { ApiError, noResourceAtPath } from './api-error.js';
import { ErrorCode } from './error-code.js';
import { noteFaultCode } from './fault-codes.js';
import { toApiError } from './to-api-error.js';
import { timedOut } from './framework-errors.js';

/** The one place every error leaves through, as `{ code, message, status }`. */
@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ApiErrorFilter');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    // The connection went away while the body was arriving: no one to answer (499: nginx's "client closed request").
    if (!request.raw.complete && request.raw.destroyed) {
      const status = timedOut(request.raw.socket) ? 408 : 499;
      this.logger.log(
        { reqId: request.id, method: request.method, route: request.routeOptions?.url ?? null, status },
        status === 408
          ? 'request closed: its body did not arrive within the request time limit'
          : 'request abandoned: the client closed the connection before sending the whole body',
      );
      return;
    }
    // An ApiError or deliberate 503 was reported by its thrower, a database fault by Database, where it happened
    // (src/database/database.ts); a bug is logged here.
    const onPurpose = exception instanceof ApiError || exception instanceof ServiceUnavailableException;
    const fault = onPurpose ? null : databaseFault(exception);
    const error = this.routeAwareError(toApiError(exception, fault), exception, request);
    if (error.getStatus() >= 500 && !fault && !onPurpose) {
      this.logger.error(
        { err: exception, reqId: request.id, method: request.method, route: request.routeOptions?.url },
        `${request.method} ${request.routeOptions?.url ?? 'unmatched route'} failed with ${error.getStatus()}`,
      );
    }

    noteFaultCode(reply.raw, error.getStatus(), error.code);
    reply.headers(error.headers);
    this.adapterHost.httpAdapter.reply(reply, error.toBody(), error.getStatus());
  }

  /** A 404 from the router means either "no such path" or "path exists, wrong method" (405). */
  private routeAwareError(error: ApiError, exception: unknown, request: FastifyRequest): ApiError {
    if (error.getStatus() !== 404 || exception instanceof ApiError) return error;
    const allowed = allowedMethods(this.adapterHost.httpAdapter.getInstance<FastifyInstance>(), request.url);
    // A route for this very method answered 404 (a missing file under /docs/*, `/v1/pets/` with an empty petId).
    if (allowed.length === 0 || allowed.includes(request.method)) return noResourceAtPath();
    return new ApiError(405, ErrorCode.MethodNotAllowed, `${request.method} is not allowed on this path.`, {
      Allow: allowed.join(', '),
    });
  }
}
