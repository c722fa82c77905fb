import { HttpException } from '@nestjs/common';
import { DatabaseFault, databaseFault } from '../../database/database-faults.js';
import { BODY_LIMIT_BYTES } from '../http.constants.js';
import { ApiError, noResourceAtPath, validationFailed } from './api-error.js';
import { CODE_BY_STATUS, ErrorCode } from './error-code.js';

export const RETRY_AFTER_SECONDS = '5';

const internalError = () => new ApiError(500, ErrorCode.InternalError, 'Internal server error.');

export const serviceUnavailable = () =>
  new ApiError(503, ErrorCode.ServiceUnavailable, 'The service is temporarily unavailable; retry later.', {
    'Retry-After': RETRY_AFTER_SECONDS,
  });

/** Load shedding's refusal, built once: under overload each would otherwise allocate an error and capture its stack. */
export const OVERLOADED = serviceUnavailable();

const fastifyErrors: Record<string, () => ApiError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => new ApiError(400, ErrorCode.InvalidJson, 'The request body is not valid JSON.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new ApiError(400, ErrorCode.InvalidJson, 'The request body is empty.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new ApiError(400, ErrorCode.InvalidJson, 'The request body does not match its Content-Length.'),
  FST_ERR_CTP_BODY_TOO_LARGE: () =>
    new ApiError(413, ErrorCode.PayloadTooLarge, `The request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB.`),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new ApiError(415, ErrorCode.UnsupportedMediaType, 'The request body must be application/json.'),
  FST_ERR_BAD_URL: () => validationFailed('The request URL is malformed.'),
  // Refused before routing (RFC 10008 §2), yet no route takes QUERY: a 404 (or 405, ApiErrorFilter) as any other.
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: noResourceAtPath,
  FST_ERR_MAX_PARAM_LENGTH: () => validationFailed('A path parameter is longer than allowed.'),
};

/** Maps anything thrown while serving a request to its answer; `fault`: its row of the database's fault table. */
export function toApiError(exception: unknown, fault: DatabaseFault | null = databaseFault(exception)): ApiError {
  if (exception instanceof ApiError) return exception;

  const cause = exception instanceof HttpException ? exception.cause : exception;
  const fastifyCode = (cause as { code?: unknown } | undefined)?.code;
  if (typeof fastifyCode === 'string' && fastifyErrors[fastifyCode]) return fastifyErrors[fastifyCode]();

  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status >= 500) return status === 503 ? serviceUnavailable() : internalError();
    const code = CODE_BY_STATUS[status];
    // A status outside the documented tables (a 403 from a plugin...) never leaves as such.
    if (code === undefined) return validationFailed('The request was refused.');
    return new ApiError(status, code, exception.message);
  }

  // A row of the database's fault table is a fault we did not cause; the client never sees its message.
  return fault ? serviceUnavailable() : internalError();
}
