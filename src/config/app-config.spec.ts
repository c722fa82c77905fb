import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig: documented server URLs', () => {
  it('defaults to placeholder production and staging URLs ending in /v1', () => {
    const config = loadConfig({});
    expect(config.publicBaseUrl).toBe('https://api.example.com/v1');
    expect(config.stagingBaseUrl).toBe('https://staging-api.example.com/v1');
  });

  it('reads PUBLIC_BASE_URL and STAGING_BASE_URL, without a trailing slash', () => {
    const config = loadConfig({ PUBLIC_BASE_URL: 'https://pets.example.org/v1/', STAGING_BASE_URL: 'http://10.0.0.5:8080/api/v1' });
    expect(config.publicBaseUrl).toBe('https://pets.example.org/v1');
    expect(config.stagingBaseUrl).toBe('http://10.0.0.5:8080/api/v1');
  });

  it.each(['pets.example.org/v1', 'https://pets.example.org', 'https://pets.example.org/v2', 'ftp://pets.example.org/v1', 'https://pets.example.org/v1?x=1'])(
    'rejects PUBLIC_BASE_URL=%s naming the variable',
    (value) => {
      expect(() => loadConfig({ PUBLIC_BASE_URL: value })).toThrow(ConfigError);
      expect(() => loadConfig({ PUBLIC_BASE_URL: value })).toThrow(/^PUBLIC_BASE_URL /);
    },
  );
});
