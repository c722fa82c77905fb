import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import type { ApiKeyRefusalReason } from './api-key-identity.js';

const REASONS: readonly ApiKeyRefusalReason[] = ['unknown', 'revoked', 'expired', 'insufficient_scope'];

/**
 * `animal_store_api_key_refusals_total{reason}`: presented keys the guard refused. Every reason's series exists from
 * the start (at 0), and counting one is a property read and an increment.
 */
@Injectable()
export class ApiKeyRefusals {
  private readonly byReason: Record<ApiKeyRefusalReason, Counter.Internal>;

  /** The service's registry, provided by the metrics module under prom-client's own class. */
  constructor(registry: Registry) {
    const counter = new Counter({
      name: 'animal_store_api_key_refusals_total',
      help: 'Presented API keys refused, by reason: unknown (no such key), revoked, expired, insufficient_scope (403).',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.byReason = Object.fromEntries(
      REASONS.map((reason) => {
        const series = counter.labels({ reason });
        series.inc(0);
        return [reason, series];
      }),
    ) as Record<ApiKeyRefusalReason, Counter.Internal>;
  }

  count(reason: ApiKeyRefusalReason): void {
    this.byReason[reason].inc();
  }
}
