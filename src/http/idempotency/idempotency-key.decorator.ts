import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import { ErrorCode } from '../errors/error-code.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

const PRINTABLE_KEY = new RegExp(`^[\\x20-\\x7e]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);

/** Absent, or 1 to 255 printable ASCII characters; anything else is a 400. */
export function parseIdempotencyKey(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !PRINTABLE_KEY.test(value)) {
    throw new ApiError(
      400,
      ErrorCode.ValidationFailed,
      `${IDEMPOTENCY_KEY_HEADER} must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters.`,
    );
  }
  return value;
}

/** The optional `Idempotency-Key` request header, validated. */
export const IdempotencyKey = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  parseIdempotencyKey(context.switchToHttp().getRequest().headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()]),
);
