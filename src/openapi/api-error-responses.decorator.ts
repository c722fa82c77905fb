import { applyDecorators } from '@nestjs/common';
import { ApiResponse, type HeadersObject } from '@nestjs/swagger';
import { ErrorBodyDto } from '../http/errors/error-body.dto.js';
import { ErrorCode } from '../http/errors/error-code.js';
import { RETRY_AFTER_SECONDS } from '../http/errors/to-api-error.js';

export type OperationErrorStatus = 400 | 404 | 409 | 413 | 415 | 422;

/** The code each documented status carries in its example (statuses can carry others, e.g. 400 invalid_json). */
const EXAMPLE_CODES: Record<number, ErrorCode> = {
  400: ErrorCode.ValidationFailed,
  401: ErrorCode.Unauthorized,
  404: ErrorCode.NotFound,
  409: ErrorCode.IdempotencyKeyInUse,
  413: ErrorCode.PayloadTooLarge,
  415: ErrorCode.UnsupportedMediaType,
  422: ErrorCode.IdempotencyKeyReused,
  429: ErrorCode.RateLimited,
  500: ErrorCode.InternalError,
  503: ErrorCode.ServiceUnavailable,
};

const RETRY_AFTER: HeadersObject = {
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', minimum: 0, example: Number(RETRY_AFTER_SECONDS) },
  },
};

/**
 * Errors every operation can answer with, whatever it does: the global guard
 * (401), the rate limits (429) and failures of the service or its database.
 */
const COMMON_ERRORS = {
  401: {
    description: 'Missing or invalid API key.',
    headers: {
      'WWW-Authenticate': {
        description: 'The bearer challenge (RFC 6750), e.g. `Bearer realm="animal-store"`.',
        required: true,
        schema: { type: 'string' },
      },
    } satisfies HeadersObject,
  },
  429: { description: 'Too many requests.', headers: RETRY_AFTER },
  500: { description: 'Unexpected failure of the service.' },
  503: {
    description: 'The service or its database is temporarily unavailable.',
    headers: RETRY_AFTER,
  },
} as const;

function errorResponse(status: string, description: string, headers: HeadersObject) {
  return ApiResponse({
    status: Number(status),
    description,
    type: ErrorBodyDto,
    example: { code: EXAMPLE_CODES[Number(status)], message: description, status: Number(status) },
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  });
}

/**
 * Documents the operation's own error statuses plus the common ones, each with
 * the `Error` schema by $ref. `headers` are those an interceptor sets on the
 * operation's responses: they are documented on every error except 401 and
 * 429, which guards answer before any interceptor runs.
 */
export function ApiErrorResponses(
  own: Partial<Record<OperationErrorStatus, string>>,
  { headers = {} }: { headers?: HeadersObject } = {},
) {
  const ownResponses = Object.entries(own).map(([status, description]) =>
    errorResponse(status, description, status === '409' ? { ...headers, ...RETRY_AFTER } : headers),
  );
  const commonResponses = Object.entries(COMMON_ERRORS).map(([status, response]) => {
    const interceptorHeaders = status === '401' || status === '429' ? {} : headers;
    const ownHeaders = 'headers' in response ? response.headers : {};
    return errorResponse(status, response.description, { ...interceptorHeaders, ...ownHeaders });
  });
  return applyDecorators(...ownResponses, ...commonResponses);
}
