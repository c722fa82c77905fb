import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig: rate limits and Redis', () => {
  it('defaults to 600 requests per key and 30 failed authentications per address a minute, in memory', () => {
    expect(loadConfig({})).toMatchObject({ rateLimitPerMinute: 600, authFailureLimitPerMinute: 30, redisUrl: undefined });
  });

  it('reads the variables; RATE_LIMIT_PER_MINUTE=0 turns per-key limiting off', () => {
    const config = loadConfig({
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '5',
      REDIS_URL: 'redis://cache:6379/2',
    });
    expect(config).toMatchObject({ rateLimitPerMinute: 0, authFailureLimitPerMinute: 5, redisUrl: 'redis://cache:6379/2' });
  });

  it.each([
    [{ RATE_LIMIT_PER_MINUTE: '-1' }, /RATE_LIMIT_PER_MINUTE/],
    [{ RATE_LIMIT_PER_MINUTE: 'lots' }, /RATE_LIMIT_PER_MINUTE/],
    [{ AUTH_FAILURE_LIMIT_PER_MINUTE: '0' }, /AUTH_FAILURE_LIMIT_PER_MINUTE/],
    [{ REDIS_URL: 'http://cache:6379' }, /REDIS_URL/],
    [{ REDIS_URL: 'not a url' }, /REDIS_URL/],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });
});
