import type { AppConfig } from '../../src/config/app-config.js';
import { startTestApp, type TestApp, type TestAppDatabase } from './test-app.js';

/**
 * A TestApp started before the tests of the enclosing describe block (`where` read then, after earlier hooks) and
 * closed after them; its fields are set once the block's beforeAll has run.
 */
export function testAppPerBlock(overrides?: Partial<AppConfig>, where?: () => TestAppDatabase): TestApp {
  const t = {} as TestApp;
  beforeAll(async () => {
    Object.assign(t, await startTestApp(overrides, where?.()));
  });
  afterAll(() => t.close?.());
  return t;
}
