/** The closed set of `code` values an Error body can carry (docs/contract.md, the OpenAPI `Error` schema). */
export const ErrorCode = {
  ValidationFailed: 'validation_failed',
  InvalidJson: 'invalid_json',
  InvalidCursor: 'invalid_cursor',
  Unauthorized: 'unauthorized',
  InsufficientScope: 'insufficient_scope',
  NotFound: 'not_found',
  MethodNotAllowed: 'method_not_allowed',
  RequestTimeout: 'request_timeout',
  PayloadTooLarge: 'payload_too_large',
  UnsupportedMediaType: 'unsupported_media_type',
  IdempotencyKeyInUse: 'idempotency_key_in_use',
  IdempotencyKeyReused: 'idempotency_key_reused',
  RateLimited: 'rate_limited',
  InternalError: 'internal_error',
  ServiceUnavailable: 'service_unavailable',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const ERROR_CODES: readonly ErrorCode[] = Object.values(ErrorCode);

/** Each status's code unless an error says otherwise; no 403: only the guard answers it (`insufficient_scope`). */
export const CODE_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: ErrorCode.ValidationFailed,
  401: ErrorCode.Unauthorized,
  404: ErrorCode.NotFound,
  405: ErrorCode.MethodNotAllowed,
  408: ErrorCode.RequestTimeout,
  409: ErrorCode.IdempotencyKeyInUse,
  413: ErrorCode.PayloadTooLarge,
  415: ErrorCode.UnsupportedMediaType,
  422: ErrorCode.IdempotencyKeyReused,
  429: ErrorCode.RateLimited,
  500: ErrorCode.InternalError,
  503: ErrorCode.ServiceUnavailable,
};
