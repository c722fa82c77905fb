import { ArgumentsHost, Catch, ExceptionFilter, Logger, ServiceUnavailableException } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowedMethods } from '../allowed-methods.js';
import { DatabaseFaultLog } from '../../database/database-fault-log.js';
import { databaseFault } from '../../database/database-faults.js';
import { bearerChallenge } from '../http.constants.js';
import { ApiError } from './api-error.js';
import { ErrorCode } from './error-code.js';
import { toApiError } from './to-api-error.js';
import { timedOut } from './framework-errors.js';

export const WWW_AUTHENTICATE = bearerChallenge();

/**
 * The status logged for a request whose client closed the connection before its body had arrived: nginx's
 * "client closed request". Nothing is sent (nobody is there to read it), so no response is counted either.
 */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * The one place every error leaves through: Nest exceptions, Fastify's own
 * errors (which the adapter wraps with the original in `cause`), database
 * failures and bugs all become `{ code, message, status }`.
 */
@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ApiErrorFilter');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly databaseFaults: DatabaseFaultLog,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    // The connection went away while the body was being read (the client hung up, or the service closed it with
    // a 408): not a fault of the service, so no 5xx, no stack, and no answer, since no one would read it.
    if (!request.raw.complete && request.raw.destroyed) {
      const status = timedOut(request.raw.socket) ? 408 : CLIENT_CLOSED_REQUEST;
      this.logger.log(
        { reqId: request.id, method: request.method, route: request.routeOptions?.url ?? null, status },
        status === 408
          ? 'request closed: its body did not arrive within the request time limit'
          : 'request abandoned: the client closed the connection before sending the whole body',
      );
      return;
    }
    // Classified once: an ApiError, or a 503 a library answers on purpose (terminus, when readiness fails), is
    // thrown by code that has reported it (ReadinessLog, load shedding); a database fault answered 503 is the
    // database's, reported once per kind without a stack; a bug is logged here, with its stack.
    const onPurpose = exception instanceof ApiError || exception instanceof ServiceUnavailableException;
    const fault = onPurpose ? null : databaseFault(exception);
    const error = this.routeAwareError(toApiError(exception, fault), exception, request);
    if (fault && error.getStatus() === 503) {
      this.databaseFaults.record(fault);
    } else if (error.getStatus() >= 500 && !fault && !onPurpose) {
      this.logger.error(
        // reqId: the field every request-scoped line carries (LoggingModule adds no request context of its own).
        { err: exception, reqId: request.id, method: request.method, route: request.routeOptions?.url },
        `${request.method} ${request.routeOptions?.url ?? 'unmatched route'} failed with ${error.getStatus()}`,
      );
    }

    reply.headers(error.headers);
    if (error.getStatus() === 401 && !reply.hasHeader('WWW-Authenticate')) {
      reply.header('WWW-Authenticate', WWW_AUTHENTICATE);
    }
    this.adapterHost.httpAdapter.reply(reply, error.toBody(), error.getStatus());
  }

  /** A 404 from the router means either "no such path" or "path exists, wrong method" (405). */
  private routeAwareError(error: ApiError, exception: unknown, request: FastifyRequest): ApiError {
    if (error.getStatus() !== 404 || exception instanceof ApiError) return error;
    const path = request.url.split('?', 1)[0];
    const allowed = allowedMethods(this.adapterHost.httpAdapter.getInstance<FastifyInstance>(), path);
    // A route for this very method answered "not found" (a missing file under /docs/*, or `/v1/pets/` with an
    // empty petId that the router refused): no 405 then.
    if (allowed.length === 0 || allowed.includes(request.method)) {
      return new ApiError(404, ErrorCode.NotFound, 'No resource exists at this path.');
    }
    return new ApiError(405, ErrorCode.MethodNotAllowed, `${request.method} is not allowed on this path.`, {
      Allow: allowed.join(', '),
    });
  }
}
