import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig: CURSOR_SECRET', () => {
  const secret = 'a-cursor-secret-of-at-least-32-chars';

  it('is optional outside production', () => {
    expect(loadConfig({}).cursorSecret).toBeUndefined();
    expect(loadConfig({ CURSOR_SECRET: '' }).cursorSecret).toBeUndefined();
  });

  it('is required in production, where every instance must share it', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/CURSOR_SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: secret }).cursorSecret).toBe(secret);
  });

  it('must be at least 32 characters', () => {
    expect(() => loadConfig({ CURSOR_SECRET: 'x'.repeat(31) })).toThrow(/CURSOR_SECRET must be at least 32 characters/);
    expect(loadConfig({ CURSOR_SECRET: 'x'.repeat(32) }).cursorSecret).toBe('x'.repeat(32));
  });
});
