/** Strings that have broken parsers, databases and serialisers before; each goes into every field and parameter. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'Rex\u0000',
  '\u0001\u0008\u001b\u007f',
  'Rex\r\nX-Injected: 1',
  '\u0085\u009f',
  '\ud83d',
  'Rex\udc36',
  '\udc36\ud83d',
  '\ufeffRex',
  // U+FFFD, which a generator once wrote in place of the surrogate range of a pattern.
  '\ufffd',
  '\u202eRex',
  '\u200b',
  '🐶'.repeat(256),
  'x'.repeat(10 * 1024),
  // Past Node's 16 KiB limit on the request line and headers when sent in a URL.
  'y'.repeat(20 * 1024),
  "' OR '1'='1",
  "'; DROP TABLE pets; --",
  'Rex\\',
  ...'$1 %s%n%x "} {"name":"Rex"} [1,2] null true __proto__ constructor prototype ../../etc/passwd %00 %'.split(' '),
  '<script>alert(1)</script>',
];

/** Number literals sent as raw JSON text, where JSON.stringify could not write them or would change them. */
export const HOSTILE_NUMBER_LITERALS: readonly string[] = (
  '1e309 -1e309 -0 0 -1 0.5 1.0 1e2 9007199254740991 9007199254740992 9007199254740993 ' +
  '9223372036854775807 9223372036854775808 18446744073709551616 123456789012345678901234567890'
).split(' ');

/** Other JSON values in place of a field's value. */
export const HOSTILE_JSON_VALUES: readonly string[] = 'null true [] {} ["Rex"] {"__proto__":{"admin":true}}'.split(' ');

/** Extra members that must not pollute prototypes or slip past the closed body. */
export const HOSTILE_MEMBERS: readonly string[] = [
  '"__proto__":{"status":"sold"}',
  '"constructor":{"prototype":{"status":"sold"}}',
  '"id":1',
  '"":""',
];

/** Path segments, already percent-encoded or deliberately malformed, in place of an id (beside the schema's bounds). */
export const HOSTILE_PATH_SEGMENTS: readonly string[] = [
  ' 1',
  'x'.repeat(10 * 1024),
  ...'-0 -1 1.0 1e2 0x10 +1 1%20 %00 1%00 %ED%A0%80 %FF % 9007199254740993 9223372036854775808 1e309 null'.split(' '),
  '%27%20OR%201%3D1',
];
