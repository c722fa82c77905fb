import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { validationFailed } from '../../edge/errors/api-error.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/**
 * Printable ASCII, with no space at either end, which HTTP strips (RFC 9110 §5.5). Runs of spaces and of visible
 * characters are disjoint, so the pattern never backtracks. Published in the OpenAPI document.
 */
export const IDEMPOTENCY_KEY_PATTERN = String.raw`^[\x21-\x7e]+(?: +[\x21-\x7e]+)*$`;
const PRINTABLE_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

export function parseIdempotencyKey(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > IDEMPOTENCY_KEY_MAX_LENGTH || !PRINTABLE_KEY.test(value)) {
    throw validationFailed(
      `${IDEMPOTENCY_KEY_HEADER} must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters.`,
    );
  }
  return value;
}

export const IdempotencyKey = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  parseIdempotencyKey(
    context.switchToHttp().getRequest<FastifyRequest>().headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()],
  ),
);
