import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { validationFailed } from '../../edge/errors/api-error.js';
import { IDEMPOTENCY_RETENTION_HOURS } from './idempotency-keys.repository.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** Printable ASCII without a space at either end, which HTTP strips (RFC 9110 §5.5); disjoint runs: no backtracking. */
export const IDEMPOTENCY_KEY_PATTERN = String.raw`^[\x21-\x7e]+(?: +[\x21-\x7e]+)*$`;
const PRINTABLE_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);
const INVALID = `${IDEMPOTENCY_KEY_HEADER} must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters.`;

export function parseIdempotencyKey(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > IDEMPOTENCY_KEY_MAX_LENGTH || !PRINTABLE_KEY.test(value))
    throw validationFailed(INVALID);
  return value;
}

const documentation = ApiHeader({
  name: IDEMPOTENCY_KEY_HEADER,
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: IDEMPOTENCY_KEY_PATTERN },
  description:
    `Makes the request safe to retry: a repeat with the same key and body within ${IDEMPOTENCY_RETENTION_HOURS} hours returns the first ` +
    'response (with `Idempotent-Replayed: true`) and creates nothing. Keys are scoped to the API key. Printable ' +
    'ASCII without a space at either end (HTTP strips those).',
});

/** The header's value, parsed; it documents the header on the operation that reads it. */
export const IdempotencyKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    parseIdempotencyKey(
      context.switchToHttp().getRequest<FastifyRequest>().headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()],
    ),
  [(target, key) => documentation(target, key!, Object.getOwnPropertyDescriptor(target, key!)!)],
);
