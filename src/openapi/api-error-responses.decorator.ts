import { applyDecorators } from '@nestjs/common';
import { ApiResponse, type HeadersObject, type SchemaObject } from '@nestjs/swagger';
import { RATE_LIMIT_HEADERS } from '../auth/rate-limit/rate-limited.error.js';
import { MAX_LIMIT_PER_MINUTE, RATE_LIMIT_WINDOW_MS } from '../config/app-config.js';
import { ErrorBody } from '../edge/errors/api-error.js';
import { CODE_BY_STATUS } from '../edge/errors/error-code.js';
import { RETRY_AFTER_SECONDS } from '../edge/errors/to-api-error.js';
import { bearerChallenge } from '../edge/http.constants.js';

type OperationErrorStatus = 400 | 404 | 409 | 413 | 415 | 422;

const WINDOW_SECONDS = RATE_LIMIT_WINDOW_MS / 1000;

const int32 = (minimum: number, maximum: number, example: number): SchemaObject => ({
  type: 'integer',
  format: 'int32',
  minimum,
  maximum,
  example,
});

export const enumHeader = (description: string, required: boolean, values: string[]) => ({
  description,
  required,
  schema: { type: 'string' as const, enum: values },
});

const RETRY_AFTER: HeadersObject = {
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: int32(0, WINDOW_SECONDS, Number(RETRY_AFTER_SECONDS)),
  },
};

/** Headers an operation's own error status carries by its RFC: when to retry a 409, which codings a 415 accepts. */
const STATUS_HEADERS: Partial<Record<string, HeadersObject>> = {
  409: RETRY_AFTER,
  415: {
    'Accept-Encoding': enumHeader(
      'Sent when the body was refused for its `Content-Encoding`: only `identity` (no compression) is accepted.',
      false,
      ['identity'],
    ),
  },
};

/** The per-key budget's headers: `required` only on a 429, never on the statuses of ANSWERED_BEFORE_INTERCEPTORS. */
function rateLimitHeaderDocs({ required }: { required: boolean }): HeadersObject {
  const when = required ? '' : ' Sent once the API key is accepted, while the per-key rate limit is on.';
  const header = (description: string, schema: SchemaObject) => ({ description: description + when, required, schema });
  return {
    [RATE_LIMIT_HEADERS.limit]: header(
      'Requests allowed per minute for this API key (on a 429: the budget that was exceeded).',
      int32(1, MAX_LIMIT_PER_MINUTE, 600),
    ),
    [RATE_LIMIT_HEADERS.remaining]: header('Requests left in the current minute.', int32(0, MAX_LIMIT_PER_MINUTE, 599)),
    [RATE_LIMIT_HEADERS.reset]: header(
      "Seconds until the current minute's budget starts again.",
      int32(0, WINDOW_SECONDS, 60),
    ),
  };
}

const DEPRECATION_HEADERS: Record<string, string> = {
  Deprecation: 'When the operation became deprecated (RFC 9745): `@` and seconds since the epoch.',
  Sunset: 'When the operation is announced to be removed (RFC 8594), as an HTTP-date.',
  Link: 'The operation to use instead, with `rel="successor-version"`.',
};

// The guard's 401, 403 and 429, and 408, 413 and 415 while the request is read: before the budget and interceptors.
const ANSWERED_BEFORE_INTERCEPTORS = new Set(['401', '403', '408', '413', '415', '429']);

/** What a response carries once the key is accepted: the budget's headers, a deprecated operation's (@Deprecated). */
export function interceptedHeaders(status: string, values: Record<string, string> = {}): HeadersObject {
  if (ANSWERED_BEFORE_INTERCEPTORS.has(status)) return {};
  const deprecation = Object.entries(values).map(
    ([name, value]) => [name, enumHeader(DEPRECATION_HEADERS[name], /^2\d\d$/.test(status), [value])] as const,
  );
  return { ...Object.fromEntries(deprecation), ...rateLimitHeaderDocs({ required: false }) };
}

/** Errors every operation can answer: the global guard (401), the rate limits (429), the service and its database. */
const COMMON_ERRORS: Record<string, { description: string; headers?: HeadersObject }> = {
  401: {
    description: 'Missing or invalid API key (unknown, revoked or expired: an expired key is named so in the message).',
    headers: {
      'WWW-Authenticate': enumHeader(
        'The bearer challenge (RFC 6750): no key; an unknown, revoked or expired key (`invalid_token`); or a malformed Authorization header.',
        true,
        [bearerChallenge(), bearerChallenge({ error: 'invalid_token' }), bearerChallenge({ error: 'invalid_request' })],
      ),
    },
  },
  408: {
    description:
      'The request line and headers, or the whole request with its body, did not arrive within the time limit ' +
      '(HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS); the connection is then closed.',
  },
  429: { description: 'Too many requests.', headers: { ...RETRY_AFTER, ...rateLimitHeaderDocs({ required: true }) } },
  500: { description: 'Unexpected failure of the service.' },
  503: { description: 'The service or its database is temporarily unavailable.', headers: RETRY_AFTER },
};

export function ApiErrorResponses(own: Partial<Record<OperationErrorStatus, string>>) {
  const responses = [
    ...Object.entries(own).map(([status, description]) => ({ status, description, headers: STATUS_HEADERS[status] })),
    ...Object.entries(COMMON_ERRORS).map(([status, response]) => ({ status, ...response })),
  ];
  return applyDecorators(
    ...responses.map(({ status, description, headers }) => {
      const example = { code: CODE_BY_STATUS[Number(status)], message: description, status: Number(status) };
      return ApiResponse({ status: Number(status), description, type: ErrorBody, example, headers });
    }),
  );
}
