import { jest } from '@jest/globals';
import { Registry } from 'prom-client';
import { pollUntil } from '../../../test/support/poll.js';
import type { ApiKeysRepository } from './api-keys.repository.js';
import { KEY_CACHE_TTL_MS } from '../api-key-store.js';
import { ExpiringKeysGauge } from './expiring-keys-gauge.js';
import { EXPIRY_WARNING_WINDOW_MS } from './expiry-warnings.js';

describe('ExpiringKeysGauge', () => {
  const countActiveExpiringWithin = jest.fn<(withinMs: number) => Promise<number>>();
  let registry: Registry;
  let gauge: ExpiringKeysGauge;
  let now: number;

  beforeEach(() => {
    // lru-cache's clock.
    now = 1_000_000;
    jest.spyOn(performance, 'now').mockImplementation(() => now);
    countActiveExpiringWithin.mockReset();
    registry = new Registry();
    gauge = new ExpiringKeysGauge(registry, { countActiveExpiringWithin } as unknown as ApiKeysRepository);
  });

  afterEach(() => jest.restoreAllMocks());

  const served = async () => {
    const text = await registry.getSingleMetricAsString('animal_store_api_keys_expiring_soon');
    return text.split('\n').filter((line) => !line.startsWith('#'));
  };
  /** Scrapes until `count` is served (a read runs in the background). */
  const serves = (count: number) =>
    pollUntil(async () => (await served())[0] === `animal_store_api_keys_expiring_soon ${count}`, {
      what: `a scrape serving ${count}`,
    });

  it('serves the count of active keys expiring within the warning window, read at start, with no label', async () => {
    countActiveExpiringWithin.mockResolvedValue(2);
    gauge.onApplicationBootstrap();
    expect(countActiveExpiringWithin).toHaveBeenCalledWith(EXPIRY_WARNING_WINDOW_MS);
    await serves(2);
    expect(await served()).toEqual(['animal_store_api_keys_expiring_soon 2']);
  });

  it('reads again on a scrape once the last read is older than the key cache, and at most that often', async () => {
    countActiveExpiringWithin.mockResolvedValue(0);
    gauge.onApplicationBootstrap();
    await serves(0);
    countActiveExpiringWithin.mockResolvedValue(1);
    now += KEY_CACHE_TTL_MS;
    expect(await served()).toEqual(['animal_store_api_keys_expiring_soon 0']);
    expect(countActiveExpiringWithin).toHaveBeenCalledTimes(1);
    now += 1;
    // The scrape that finds the count stale gets it at once, and the next read starts.
    expect(await served()).toEqual(['animal_store_api_keys_expiring_soon 0']);
    await serves(1);
    expect(countActiveExpiringWithin).toHaveBeenCalledTimes(2);
  });

  it('keeps the last count, and answers the scrape at once, when the database cannot be read', async () => {
    countActiveExpiringWithin.mockResolvedValue(3);
    gauge.onApplicationBootstrap();
    await serves(3);
    countActiveExpiringWithin.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    now += KEY_CACHE_TTL_MS + 1;
    await served();
    await pollUntil(() => countActiveExpiringWithin.mock.calls.length === 2);
    expect(await served()).toEqual(['animal_store_api_keys_expiring_soon 3']);
    // A read that hangs (an unreachable host) does not hold the scrape up.
    countActiveExpiringWithin.mockReturnValue(new Promise(() => undefined));
    now += KEY_CACHE_TTL_MS + 1;
    expect(await served()).toEqual(['animal_store_api_keys_expiring_soon 3']);
  });
});
