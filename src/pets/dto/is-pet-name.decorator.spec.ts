import { Ajv } from 'ajv';
import { validateSync } from 'class-validator';
import { IsPetName, NAME_MAX_LENGTH, NAME_PATTERN, NAME_UNICODE_RULE, isPetName } from './is-pet-name.decorator.js';

const ACCEPTED = [
  ['a single character', 'R'],
  ['surrounding spaces, kept as sent', '  Rex  '],
  ['unicode letters and emoji', 'Bébé 🐶 ねこ'],
  ['255 characters', 'x'.repeat(255)],
  ['255 astral characters (510 UTF-16 units)', '🐶'.repeat(255)],
  ['a line separator before a letter (whitespace, not a control)', '\u2028R'],
];

const REJECTED = [
  ['an empty string', ''],
  ['only spaces', '   '],
  ['only whitespace of several kinds', ' \u00a0\u2003'],
  ['256 characters', 'x'.repeat(256)],
  ['256 astral characters', '🐶'.repeat(256)],
  ['NUL', 'Re\u0000x'],
  ['a tab', 'Re\tx'],
  ['a newline', 'Rex\n'],
  ['DEL', 'Rex\u007f'],
  ['a C1 control', 'Rex\u0085'],
  ['a lone high surrogate', 'Rex\ud83d'],
  ['a lone low surrogate', '\udc36Rex'],
  ['CR LF inside', 'Rex\r\nX-Injected: 1'],
];

describe('isPetName', () => {
  it.each(ACCEPTED)('accepts %s', (_case, value) => {
    expect(isPetName(value)).toBe(true);
  });

  it.each(REJECTED)('rejects %s', (_case, value) => {
    expect(isPetName(value)).toBe(false);
  });

  // The document used to publish only the lengths, so a client (or a contract fuzzer) following it sent names
  // with control characters or only whitespace and had them refused. Then it published a pattern that only meant
  // the rule with the `u` flag, so generators without it wrote it wrongly (lone surrogates became U+FFFD).
  it('publishes its rule: the documented schema plus the rule stated in words agree with it on every case', () => {
    const documented = new Ajv().compile({
      type: 'string',
      minLength: 1,
      maxLength: NAME_MAX_LENGTH,
      pattern: NAME_PATTERN,
    });

    for (const [, value] of [...ACCEPTED, ...REJECTED]) {
      expect([value, documented(value) && NAME_UNICODE_RULE.test(value)]).toEqual([value, isPetName(value)]);
    }
  });

  it('publishes a pattern that means the same with and without the u flag, in ASCII with \\xHH escapes only', () => {
    expect(NAME_PATTERN).toMatch(/^[\x20-\x7e]+$/);
    expect(NAME_PATTERN).not.toMatch(/\\[upPsSdDwWbB]/);
    const withU = new RegExp(NAME_PATTERN, 'u');
    const withoutU = new RegExp(NAME_PATTERN);
    const unicodeAjv = new Ajv().compile({ type: 'string', pattern: NAME_PATTERN });
    const legacyAjv = new Ajv({ unicodeRegExp: false }).compile({ type: 'string', pattern: NAME_PATTERN });
    for (const [, value] of [
      ...ACCEPTED,
      ...REJECTED,
      ['an emoji name', 'Rex🐶'],
      ['U+FFFD', '\ufffd'],
      ['a lone surrogate after a letter', 'a\ud800'],
    ]) {
      const expected = withU.test(value);
      expect([value, withoutU.test(value), unicodeAjv(value), legacyAjv(value)]).toEqual([
        value,
        expected,
        expected,
        expected,
      ]);
    }
  });

  it('states in words only what the pattern cannot say portably: Unicode whitespace and lone surrogates', () => {
    expect(new RegExp(NAME_PATTERN).test('\u00a0\u2003')).toBe(true);
    expect(new RegExp(NAME_PATTERN).test('Rex\ud83d')).toBe(true);
    expect(isPetName('\u00a0\u2003')).toBe(false);
    expect(isPetName('Rex\ud83d')).toBe(false);
    expect(isPetName('\ufffd')).toBe(true);
  });

  it.each([[42], [null], [undefined], [['Rex']], [{ name: 'Rex' }], [true]])('rejects the non-string %j', (value) => {
    expect(isPetName(value)).toBe(false);
  });

  it('limits names to 255 characters', () => {
    expect(NAME_MAX_LENGTH).toBe(255);
  });
});

describe('@IsPetName', () => {
  class Named {
    @IsPetName()
    name: unknown;
  }

  const errorsFor = (name: unknown) => validateSync(Object.assign(new Named(), { name }));

  it('passes a valid name', () => {
    expect(errorsFor('Rex')).toEqual([]);
  });

  it('explains the rule, naming the property', () => {
    const [error] = errorsFor('\u0000');

    expect(error.property).toBe('name');
    expect(error.constraints).toEqual({
      isPetName: 'name must be a string of 1 to 255 characters, not only whitespace, without control characters',
    });
  });
});
