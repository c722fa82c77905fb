import { ValidationOptions, registerDecorator } from 'class-validator';

export const NAME_MAX_LENGTH = 255;

// C0 controls, DEL and C1 controls; PostgreSQL rejects NUL in text outright.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * 1 to 255 characters (code points), not only whitespace, no control
 * characters, and well-formed UTF-16 (a lone surrogate cannot be stored as
 * sent: PostgreSQL would receive U+FFFD instead).
 */
export function isPetName(value: unknown): value is string {
  if (typeof value !== 'string' || !value.isWellFormed()) return false;
  const length = [...value].length;
  return length >= 1 && length <= NAME_MAX_LENGTH && /\S/.test(value) && !CONTROL_CHARACTERS.test(value);
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
