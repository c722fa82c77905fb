import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig: operations settings', () => {
  it('defaults to a 10 s shutdown grace period, no metrics token and the info log level', () => {
    expect(loadConfig({})).toMatchObject({ shutdownGraceMs: 10_000, metricsToken: undefined, logLevel: 'info' });
  });

  it('reads SHUTDOWN_GRACE_MS, METRICS_TOKEN and LOG_LEVEL=silent', () => {
    const token = 'scrape-token-0123456789';
    const config = loadConfig({ SHUTDOWN_GRACE_MS: '2500', METRICS_TOKEN: token, LOG_LEVEL: 'silent' });
    expect(config).toMatchObject({ shutdownGraceMs: 2_500, metricsToken: token, logLevel: 'silent' });
  });

  it.each([
    ['SHUTDOWN_GRACE_MS', '-1'],
    ['SHUTDOWN_GRACE_MS', '10s'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'has a space in it 0123456789'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
