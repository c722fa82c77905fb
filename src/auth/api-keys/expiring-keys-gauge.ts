import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { ApiKeysRepository } from './api-keys.repository.js';
import { KEY_CACHE_TTL_MS } from '../api-key-store.js';
import { EXPIRY_WARNING_WINDOW_MS } from './expiry-warnings.js';

const WINDOW_DAYS = EXPIRY_WARNING_WINDOW_MS / 86_400_000;

/**
 * `animal_store_api_keys_expiring_soon`, one count without labels. Read at start, then in the background when
 * scraped, at most once per KEY_CACHE_TTL_MS: a scrape gets the last count at once, never waiting on the database.
 */
@Injectable()
export class ExpiringKeysGauge implements OnApplicationBootstrap {
  private count = 0;
  private readAt = -Infinity;
  private reading: Promise<void> | null = null;

  constructor(
    registry: Registry,
    private readonly keys: ApiKeysRepository,
  ) {
    const current = () => this.count;
    const refresh = () => void this.refresh();
    new Gauge({
      name: 'animal_store_api_keys_expiring_soon',
      help: `Active API keys that expire within ${WINDOW_DAYS} days (read from the database at most every ${KEY_CACHE_TTL_MS / 1000} s while scraped): rotate them before their clients are refused (npm run apikey -- list).`,
      registers: [registry],
      collect() {
        this.set(current());
        refresh();
      },
    });
  }

  onApplicationBootstrap(): void {
    void this.refresh();
  }

  refresh(now = Date.now()): Promise<void> {
    if (this.reading) return this.reading;
    if (now - this.readAt < KEY_CACHE_TTL_MS) return Promise.resolve();
    this.reading = this.keys
      .countActiveExpiringWithin(EXPIRY_WARNING_WINDOW_MS)
      .then(
        (count) => {
          this.count = count;
          this.readAt = Date.now();
        },
        // The database's faults have their own metrics and alerts; the last count stands meanwhile.
        () => undefined,
      )
      .finally(() => (this.reading = null));
    return this.reading;
  }
}
