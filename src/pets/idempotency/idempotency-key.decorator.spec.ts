import { expect } from '@jest/globals';
import { ApiError } from '../../edge/errors/api-error.js';
import { IDEMPOTENCY_KEY_PATTERN, parseIdempotencyKey } from './idempotency-key.decorator.js';

describe('parseIdempotencyKey', () => {
  it('accepts an absent header and 1 to 255 printable ASCII characters', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey('a')).toBe('a');
    expect(parseIdempotencyKey('order 42 / retry ~1')).toBe('order 42 / retry ~1');
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
    expect(parseIdempotencyKey('a  b')).toBe('a  b');
  });

  // HTTP strips the spaces around a field value, so the document must not promise keys a client cannot send.
  it.each([[' '], [' a'], ['a ']])(
    'rejects %j, which would not arrive as sent, as its published pattern does',
    (value) => {
      expect(new RegExp(IDEMPOTENCY_KEY_PATTERN).test(value)).toBe(false);
      expect(() => parseIdempotencyKey(value)).toThrow(ApiError);
    },
  );

  it.each<[unknown, string]>([
    ['', 'empty'],
    ['k'.repeat(256), 'too long'],
    ['clé', 'non-ASCII'],
    ['a\tb', 'a tab'],
    [['a', 'b'], 'not a string'],
  ])('rejects %j (%s) with a 400 validation_failed', (value) => {
    const error = (() => {
      try {
        parseIdempotencyKey(value);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).toBody()).toEqual({
      code: 'validation_failed',
      message: expect.any(String),
      status: 400,
    });
  });
});
