import { jest } from '@jest/globals';
import { Registry } from 'prom-client';
import type { ApiKeysRepository } from './api-keys.repository.js';
import { KEY_CACHE_TTL_MS } from '../api-key-store.js';
import { ExpiringKeysGauge } from './expiring-keys-gauge.js';
import { EXPIRY_WARNING_WINDOW_MS } from './expiry-warnings.js';

describe('ExpiringKeysGauge', () => {
  const countActiveExpiringWithin = jest.fn<(withinMs: number) => Promise<number>>();
  let registry: Registry;
  let gauge: ExpiringKeysGauge;

  beforeEach(() => {
    countActiveExpiringWithin.mockReset();
    registry = new Registry();
    gauge = new ExpiringKeysGauge(registry, { countActiveExpiringWithin } as unknown as ApiKeysRepository);
  });

  const served = async () => {
    const text = await registry.getSingleMetricAsString('animal_store_api_keys_expiring_soon');
    return text.split('\n').filter((line) => !line.startsWith('#'));
  };

  it('serves the count of active keys expiring within the warning window, read at start, with no label', async () => {
    countActiveExpiringWithin.mockResolvedValue(2);
    gauge.onApplicationBootstrap();
    await gauge.refresh();
    expect(countActiveExpiringWithin).toHaveBeenCalledWith(EXPIRY_WARNING_WINDOW_MS);
    expect(await served()).toEqual(['animal_store_api_keys_expiring_soon 2']);
  });

  it('reads again on a scrape once the last read is older than the key cache, and at most that often', async () => {
    countActiveExpiringWithin.mockResolvedValue(0);
    await gauge.refresh();
    countActiveExpiringWithin.mockResolvedValue(1);
    await served();
    expect(countActiveExpiringWithin).toHaveBeenCalledTimes(1);
    await gauge.refresh(Date.now() + KEY_CACHE_TTL_MS);
    expect(countActiveExpiringWithin).toHaveBeenCalledTimes(2);
    expect(await served()).toEqual(['animal_store_api_keys_expiring_soon 1']);
  });

  it('keeps the last count, and answers the scrape at once, when the database cannot be read', async () => {
    countActiveExpiringWithin.mockResolvedValue(3);
    await gauge.refresh();
    countActiveExpiringWithin.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    await gauge.refresh(Date.now() + KEY_CACHE_TTL_MS);
    expect(await served()).toEqual(['animal_store_api_keys_expiring_soon 3']);
    // A read that hangs (an unreachable host) does not hold the scrape up.
    countActiveExpiringWithin.mockReturnValue(new Promise(() => undefined));
    void gauge.refresh(Date.now() + 2 * KEY_CACHE_TTL_MS);
    expect(await served()).toEqual(['animal_store_api_keys_expiring_soon 3']);
  });
});
