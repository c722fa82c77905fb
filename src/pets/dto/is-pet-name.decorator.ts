import { ValidationOptions, registerDecorator } from 'class-validator';

export const NAME_MAX_LENGTH = 255;

// Neither C0 controls, DEL and C1 controls (PostgreSQL rejects NUL in text outright) nor a lone surrogate (it
// cannot be stored as sent: PostgreSQL would receive U+FFFD instead). With the `u` flag a surrogate pair is one
// code point outside D800-DFFF, so only lone surrogates fall in the range. Leading whitespace and the first
// visible character are disjoint classes, so the pattern never backtracks.
const BLANK = String.raw`[^\S\u0000-\u001f\u007f-\u009f]`;
const VISIBLE = String.raw`[^\s\u0000-\u001f\u007f-\u009f\ud800-\udfff]`;
const ALLOWED = String.raw`[^\u0000-\u001f\u007f-\u009f\ud800-\udfff]`;

/**
 * The rule as an ECMA-262 pattern (evaluated with the `u` flag, as JSON Schema validators do), published in
 * the OpenAPI document so that clients and contract tests know it: at least one character that is not
 * whitespace, none that is a control character or a lone surrogate.
 */
export const NAME_PATTERN = `^${BLANK}*${VISIBLE}${ALLOWED}*$`;
const NAME = new RegExp(NAME_PATTERN, 'u');

// A string has at most as many code points as UTF-16 units, so only a longer one needs its code points counted.
const withinMaxLength = (value: string) => value.length <= NAME_MAX_LENGTH || [...value].length <= NAME_MAX_LENGTH;

/** 1 to 255 characters (code points) matching NAME_PATTERN. */
export function isPetName(value: unknown): value is string {
  return typeof value === 'string' && withinMaxLength(value) && NAME.test(value);
}

export function IsPetName(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isPetName',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be a string of 1 to ${NAME_MAX_LENGTH} characters, not only whitespace, without control characters`,
        ...options,
      },
      validator: { validate: isPetName },
    });
}
