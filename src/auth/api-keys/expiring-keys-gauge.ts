import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Gauge, Registry } from 'prom-client';
import { ApiKeysRepository } from './api-keys.repository.js';
import { KEY_CACHE_TTL_MS } from '../api-key-store.js';
import { EXPIRY_WARNING_WINDOW_MS } from './expiry-warnings.js';

const COUNT = 'count';

/** `animal_store_api_keys_expiring_soon`, read at start, then in the background at most once per KEY_CACHE_TTL_MS. */
@Injectable()
export class ExpiringKeysGauge implements OnApplicationBootstrap {
  private readonly count: LRUCache<typeof COUNT, number>;

  constructor(registry: Registry, keys: ApiKeysRepository) {
    const count = (this.count = new LRUCache({
      max: 1,
      ttl: KEY_CACHE_TTL_MS,
      ttlResolution: 0,
      // A stale count is served while the next read runs in the background.
      allowStale: true,
      noDeleteOnStaleGet: true,
      // The database's faults have their own metrics and alerts; the last count stands meanwhile.
      fetchMethod: () => keys.countActiveExpiringWithin(EXPIRY_WARNING_WINDOW_MS).catch(() => undefined),
    }));
    new Gauge({
      name: 'animal_store_api_keys_expiring_soon',
      help: `Active API keys that expire within ${EXPIRY_WARNING_WINDOW_MS / 86_400_000} days (read from the database at most every ${KEY_CACHE_TTL_MS / 1000} s while scraped): rotate them before their clients are refused (npm run apikey -- list).`,
      registers: [registry],
      collect() {
        this.set(count.get(COUNT) ?? 0);
        void count.fetch(COUNT);
      },
    });
  }

  onApplicationBootstrap(): void {
    void this.count.fetch(COUNT);
  }
}
