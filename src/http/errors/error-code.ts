/**
 * The closed set of machine-readable `code` values an Error body can carry.
 * Documented in the README and in the OpenAPI `Error` schema.
 */
export const ErrorCode = {
  ValidationFailed: 'validation_failed',
  InvalidJson: 'invalid_json',
  InvalidCursor: 'invalid_cursor',
  Unauthorized: 'unauthorized',
  NotFound: 'not_found',
  MethodNotAllowed: 'method_not_allowed',
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
