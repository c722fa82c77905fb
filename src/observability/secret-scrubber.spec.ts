import { configuredSecrets, secretScrubber, textScrubber } from './secret-scrubber.js';

describe('secretScrubber', () => {
  const scrub = secretScrubber(['configured-key-0123456789', 'quote"and\\slash-key']);

  it('replaces configured keys, in their JSON-escaped form too', () => {
    const line = JSON.stringify({ msg: 'got configured-key-0123456789 and quote"and\\slash-key' });
    expect(scrub(line)).toBe(JSON.stringify({ msg: 'got [redacted] and [redacted]' }));
  });

  it('replaces anything shaped like an issued key', () => {
    expect(scrub('{"reqId":"pet_AbCdEfGhIjKlMnOpQrStUvWxYz012345"}')).toBe('{"reqId":"[redacted]"}');
    expect(scrub('{"msg":"pet_dev_abcDEF0123456789-_xyzXYZ"}')).toBe('{"msg":"[redacted]"}');
  });

  it('keeps the scheme and drops the credential of a bearer value or an Authorization header', () => {
    expect(scrub('{"msg":"sent Bearer abc.DEF-123~+/=="}')).toBe('{"msg":"sent Bearer [redacted]"}');
    expect(scrub('{"headers":{"authorization":"Basic dXNlcjpwYXNz"}}')).toBe(
      '{"headers":{"authorization":"[redacted]"}}',
    );
  });

  it('replaces a key encoded twice in a logged URL', () => {
    const line = JSON.stringify({ url: '/v1/nope/pet%255FAbCdEfGhIjKlMnOpQrStUvWxYz012345', msg: '50% done' });
    expect(scrub(line)).toBe(JSON.stringify({ url: '/v1/nope/[redacted]', msg: '50% done' }));
  });

  it('leaves ordinary lines alone, including placeholders that are not credentials', () => {
    const line = '{"msg":"send Authorization: Bearer <one of API_KEYS>","pet":"petunia","status":201}';
    expect(scrub(line)).toBe(line);
  });
});

describe('textScrubber', () => {
  const scrub = textScrubber(['configured-key-0123456789', 'quote"and\\slash-key']);

  it('applies the same rule to plain strings, where a configured key appears unescaped', () => {
    expect(scrub('/v1/nope/configured-key-0123456789')).toBe('/v1/nope/[redacted]');
    expect(scrub('got quote"and\\slash-key')).toBe('got [redacted]');
    expect(scrub('access_token=pet_AbCdEfGhIjKlMnOpQrStUvWxYz012345&x=1')).toBe('access_token=[redacted]&x=1');
    expect(scrub('Bearer abc.DEF-123~+/==')).toBe('Bearer [redacted]');
    expect(scrub('GET /v1/pets/:petId')).toBe('GET /v1/pets/:petId');
  });

  it('replaces keys percent-encoded in part or whole, with hex digits in either case', () => {
    expect(scrub('/v1/nope/pet%5FAbCdEfGhIjKlMnOpQrStUvWxYz012345')).toBe('/v1/nope/[redacted]');
    expect(scrub('/v1/pets/pet%5fAbCdEfGhIjKlMnOpQrStUvWxYz012345')).toBe('/v1/pets/[redacted]');
    const whole = [...'configured-key-0123456789'].map((char) => `%${char.charCodeAt(0).toString(16)}`).join('');
    expect(scrub(`/v1/pets/${whole}`)).toBe('/v1/pets/[redacted]');
    expect(scrub(`/v1/pets/${whole.toUpperCase()}`)).toBe('/v1/pets/[redacted]');
    expect(scrub('/v1/pets/quote%22and%5Cslash-key')).toBe('/v1/pets/[redacted]');
  });

  it('decodes until stable: a key encoded twice or more, or beside bytes that are not UTF-8, is replaced too', () => {
    const key = 'pet_AbCdEfGhIjKlMnOpQrStUvWxYz012345';
    expect(scrub(`/v1/nope/${key.replace('_', '%255F')}?x=1`)).toBe('/v1/nope/[redacted]?x=1');
    expect(scrub(`/v1/nope/%2570${key.slice(1)}`)).toBe('/v1/nope/[redacted]');
    expect(scrub('/v1/nope/configured%25252Dkey-0123456789')).toBe('/v1/nope/[redacted]');
    expect(scrub(`/v1/nope/${key.replace('_', '%5F')}%FF%C3%28`)).toBe('/v1/nope/[redacted]');
    // Still changing after every decoding allowed: no client sends that, and it may hide anything.
    expect(scrub('/v1/nope/%2525252525')).toBe('/v1/nope/[redacted]');
    expect(scrub('/v1/pets?name=100%25%20sure&x=%2541')).toBe('/v1/pets?name=100%25%20sure&x=%2541');
  });
});

describe('configuredSecrets', () => {
  it('lists the keys of API_KEYS and the metrics token when there is one', () => {
    const apiKeys = [{ id: 'env-ci', name: 'API_KEYS ci', key: 'a-key' }];
    expect(configuredSecrets({ apiKeys, metricsToken: 'a-token' })).toEqual(['a-key', 'a-token']);
    expect(configuredSecrets({ apiKeys, metricsToken: undefined })).toEqual(['a-key']);
  });
});
