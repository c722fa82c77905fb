import { applyDecorators } from '@nestjs/common';
import { ApiResponse, type HeadersObject } from '@nestjs/swagger';
import type { ApiKeyScope } from '../auth/api-key-scope.js';
import { insufficientScope } from '../auth/key-refused.error.js';
import { ErrorBodyDto } from '../edge/errors/error-body.dto.js';
import { CODE_BY_STATUS } from '../edge/errors/error-code.js';
import { bearerChallenge } from '../edge/http.constants.js';
import { RETRY_AFTER_SECONDS } from '../edge/errors/to-api-error.js';
import { MAX_LIMIT_PER_MINUTE, RATE_LIMIT_WINDOW_MS } from '../config/app-config.js';
import { RATE_LIMIT_HEADERS } from '../auth/rate-limit/rate-limited.error.js';

const WINDOW_SECONDS = RATE_LIMIT_WINDOW_MS / 1000;

export type OperationErrorStatus = 400 | 404 | 409 | 413 | 415 | 422;

const RETRY_AFTER: HeadersObject = {
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: {
      type: 'integer',
      format: 'int32',
      minimum: 0,
      maximum: WINDOW_SECONDS,
      example: Number(RETRY_AFTER_SECONDS),
    },
  },
};

/** Headers an operation's own error status carries by its RFC: when to retry a 409, which codings a 415 accepts. */
const STATUS_HEADERS: Partial<Record<string, HeadersObject>> = {
  409: RETRY_AFTER,
  415: {
    'Accept-Encoding': {
      description:
        'Sent when the body was refused for its `Content-Encoding`: only `identity` (no compression) is accepted.',
      required: false,
      schema: { type: 'string', enum: ['identity'] },
    },
  },
};

/**
 * The per-key budget's headers. They are on every response to a request whose API key was accepted while
 * RATE_LIMIT_PER_MINUTE is above 0, so `required` only where they always are (429); never on responses
 * refused before the key is known (see REFUSED_BEFORE_THE_KEY).
 */
export function rateLimitHeaderDocs({ required }: { required: boolean }): HeadersObject {
  const when = required ? '' : ' Sent once the API key is accepted, while the per-key rate limit is on.';
  return {
    [RATE_LIMIT_HEADERS.limit]: {
      description: `Requests allowed per minute for this API key (on a 429: the budget that was exceeded).${when}`,
      required,
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: MAX_LIMIT_PER_MINUTE, example: 600 },
    },
    [RATE_LIMIT_HEADERS.remaining]: {
      description: `Requests left in the current minute.${when}`,
      required,
      schema: { type: 'integer', format: 'int32', minimum: 0, maximum: MAX_LIMIT_PER_MINUTE, example: 599 },
    },
    [RATE_LIMIT_HEADERS.reset]: {
      description: `Seconds until the current minute's budget starts again.${when}`,
      required,
      schema: { type: 'integer', format: 'int32', minimum: 0, maximum: WINDOW_SECONDS, example: 60 },
    },
  };
}

/**
 * Statuses answered before the API key is checked, so without the rate-limit headers: 401 by the guard itself,
 * 408, 413 and 415 while the request or its body is read, which happens before any guard runs.
 */
const REFUSED_BEFORE_THE_KEY = new Set(['401', '408', '413', '415']);

/** Answered before any interceptor runs, so without the operation's own headers. */
const ANSWERED_BEFORE_INTERCEPTORS = new Set(['401', '408', '429']);

/**
 * Errors every operation can answer with, whatever it does: the global guard
 * (401), the rate limits (429) and failures of the service or its database.
 */
const COMMON_ERRORS = {
  401: {
    description: 'Missing or invalid API key (unknown, revoked or expired: an expired key is named so in the message).',
    headers: {
      'WWW-Authenticate': {
        description:
          'The bearer challenge (RFC 6750): no key; an unknown, revoked or expired key (`invalid_token`); or a malformed Authorization header.',
        required: true,
        schema: {
          type: 'string',
          enum: [
            bearerChallenge(),
            bearerChallenge({ error: 'invalid_token' }),
            bearerChallenge({ error: 'invalid_request' }),
          ],
        },
      },
    } satisfies HeadersObject,
  },
  408: {
    description:
      'The request line and headers, or the whole request with its body, did not arrive within the time limit ' +
      '(HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS); the connection is then closed.',
  },
  429: { description: 'Too many requests.', headers: { ...RETRY_AFTER, ...rateLimitHeaderDocs({ required: true }) } },
  500: { description: 'Unexpected failure of the service.' },
  503: {
    description: 'The service or its database is temporarily unavailable.',
    headers: RETRY_AFTER,
  },
} as const;

function errorResponse(status: string, description: string, headers: HeadersObject) {
  const budget = REFUSED_BEFORE_THE_KEY.has(status) || status === '429' ? {} : rateLimitHeaderDocs({ required: false });
  const all = { ...headers, ...budget };
  return ApiResponse({
    status: Number(status),
    description,
    type: ErrorBodyDto,
    example: { code: CODE_BY_STATUS[Number(status)], message: description, status: Number(status) },
    ...(Object.keys(all).length > 0 ? { headers: all } : {}),
  });
}

/**
 * The 403 of an operation that needs `scope`: answered by the API key guard, so before the rate limits and any
 * interceptor (no budget headers, no operation headers), with the RFC 6750 §3.1 challenge naming the scope.
 */
export function ApiInsufficientScopeResponse(scope: ApiKeyScope) {
  const description = `The API key is valid but limited to scopes without \`${scope}\`, which this operation needs.`;
  return ApiResponse({
    status: 403,
    description,
    type: ErrorBodyDto,
    example: insufficientScope(scope).toBody(),
    headers: {
      'WWW-Authenticate': {
        description: 'The bearer challenge (RFC 6750 §3.1), naming the scope the operation needs.',
        required: true,
        schema: {
          type: 'string',
          enum: [bearerChallenge({ error: 'insufficient_scope', scope })],
        },
      },
    },
  });
}

/**
 * Documents the operation's own error statuses plus the common ones, each with
 * the `Error` schema by $ref. `headers` are those an interceptor sets on the
 * operation's responses: they are documented on every error except 401, 408 and
 * 429, which are answered before any interceptor runs.
 */
export function ApiErrorResponses(
  own: Partial<Record<OperationErrorStatus, string>>,
  { headers = {} }: { headers?: HeadersObject } = {},
) {
  const ownResponses = Object.entries(own).map(([status, description]) =>
    errorResponse(status, description, { ...headers, ...STATUS_HEADERS[status] }),
  );
  const commonResponses = Object.entries(COMMON_ERRORS).map(([status, response]) => {
    const interceptorHeaders = ANSWERED_BEFORE_INTERCEPTORS.has(status) ? {} : headers;
    const ownHeaders = 'headers' in response ? response.headers : {};
    return errorResponse(status, response.description, { ...interceptorHeaders, ...ownHeaders });
  });
  return applyDecorators(...ownResponses, ...commonResponses);
}
