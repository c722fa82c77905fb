/** Where the rate-limit counters are being kept: the shared Redis, or this process's memory. */
export type RateLimitStorageKind = 'redis' | 'memory';

/** Told whenever the counters move between Redis and memory (the metrics expose it as a gauge). */
export abstract class RateLimitStorageGauge {
  abstract storageInUse(storage: RateLimitStorageKind): void;
}
