import { Gauge, type Registry } from 'prom-client';

/** Where the rate-limit counters are being kept: the shared Redis, or this process's memory. */
export type RateLimitStorageKind = 'redis' | 'memory';

export type RateLimitStorageGauge = { storageInUse(storage: RateLimitStorageKind): void };

/** `animal_store_rate_limit_storage{storage}`: 1 for the storage in use, 0 for the other. */
export function rateLimitStorageGauge(registry: Registry): RateLimitStorageGauge {
  const gauge = new Gauge({
    name: 'animal_store_rate_limit_storage',
    help: 'Where the rate-limit counters are kept: 1 for the storage in use (redis: shared; memory: this instance only).',
    labelNames: ['storage'],
    registers: [registry],
  });
  return {
    storageInUse(inUse) {
      for (const storage of ['redis', 'memory'] as const) gauge.set({ storage }, storage === inUse ? 1 : 0);
    },
  };
}
