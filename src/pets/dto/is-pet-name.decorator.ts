import { ValidateBy } from 'class-validator';

export const NAME_MAX_LENGTH = 255;

// C0 controls, DEL and C1 controls (PostgreSQL rejects NUL in text), as \xHH escapes every regex engine reads alike.
const CONTROLS = String.raw`\x00-\x1f\x7f-\x9f`;

/** No control character, and one neither a control nor a space: disjoint from leading spaces, so no backtracking. */
export const NAME_PATTERN = `^ *[^${CONTROLS} ][^${CONTROLS}]*$`;
const NAME = new RegExp(NAME_PATTERN);

// What no pattern states portably, so the document says it in words; a lone surrogate could not be stored as sent
// (PostgreSQL would receive U+FFFD).
export const NAME_UNICODE_RULE = {
  description:
    'The name must also contain a character that is not Unicode whitespace (ECMA-262 `\\s`), and must be ' +
    'well-formed Unicode: no unpaired UTF-16 surrogate (in JavaScript, `name.isWellFormed()`).',
  test: (value: string) => value.isWellFormed() && /\S/.test(value),
};

/** 1 to 255 characters (code points) matching NAME_PATTERN and NAME_UNICODE_RULE. */
export function isPetName(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  // A string has at most as many code points as UTF-16 units: only a longer one needs its code points counted.
  if (value.length > NAME_MAX_LENGTH && [...value].length > NAME_MAX_LENGTH) return false;
  return NAME.test(value) && NAME_UNICODE_RULE.test(value);
}

export const IsPetName = (): PropertyDecorator =>
  ValidateBy(
    { name: 'isPetName', validator: { validate: isPetName } },
    {
      message: `$property must be a string of 1 to ${NAME_MAX_LENGTH} characters, not only whitespace, without control characters`,
    },
  );
