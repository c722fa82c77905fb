import { jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getStorageToken, type ThrottlerStorage } from '@nestjs/throttler';
import { defaultConfig } from '../../../test/support/config.js';
import { RATE_LIMIT_WINDOW_MS } from '../../config/app-config.js';
import { ConfigModule } from '../../config/config.module.js';
import { ApiKeyThrottlerGuard } from './api-key-throttler.guard.js';
import { RateLimitModule } from './rate-limit.module.js';

class PetsController {}
const list = (): void => undefined;

describe('RateLimitModule: the per-key budget', () => {
  it('hands the storage the API key id as the key, the throttler name beside it (never prefixed twice)', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot({ ...defaultConfig(), rateLimitPerMinute: 5 }), RateLimitModule],
      providers: [ApiKeyThrottlerGuard],
    }).compile();
    await moduleRef.init();
    const storage = moduleRef.get<ThrottlerStorage>(getStorageToken());
    const increment = jest.spyOn(storage, 'increment');
    const request = { user: { id: 'key-1' }, headers: {} };
    const context = {
      getClass: () => PetsController,
      getHandler: () => list,
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({ header: () => undefined }) }),
    } as unknown as ExecutionContext;

    await expect(moduleRef.get(ApiKeyThrottlerGuard).canActivate(context)).resolves.toBe(true);

    expect(increment.mock.calls).toEqual([['key-1', RATE_LIMIT_WINDOW_MS, 5, 0, 'default']]);
    await moduleRef.close();
  });
});
