import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { API_KEY_REFUSAL_REASONS, type ApiKeyRefusalReason } from './api-key-identity.js';

/** `animal_store_api_key_refusals_total`, each reason's series bound at start (at 0): a refusal is a Map lookup. */
@Injectable()
export class ApiKeyRefusals {
  private readonly byReason: Map<ApiKeyRefusalReason, Counter.Internal>;

  constructor(registry: Registry) {
    const refusals = new Counter({
      name: 'animal_store_api_key_refusals_total',
      help: 'Presented API keys refused, by reason: unknown (no such key), revoked, expired, insufficient_scope (403).',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.byReason = new Map(API_KEY_REFUSAL_REASONS.map((reason) => [reason, refusals.labels({ reason })]));
    for (const series of this.byReason.values()) series.inc(0);
  }

  count(reason: ApiKeyRefusalReason): void {
    this.byReason.get(reason)!.inc();
  }
}
