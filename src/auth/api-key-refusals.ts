import { Injectable } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import type { ApiKeyRefusalReason } from './api-key-identity.js';

const REASONS: readonly ApiKeyRefusalReason[] = ['unknown', 'revoked', 'expired', 'insufficient_scope'];

/** `animal_store_api_key_refusals_total{reason}`, every reason's series present from the start (at 0). */
@Injectable()
export class ApiKeyRefusals {
  private readonly refusals: Counter<'reason'>;

  constructor(registry: Registry) {
    this.refusals = new Counter({
      name: 'animal_store_api_key_refusals_total',
      help: 'Presented API keys refused, by reason: unknown (no such key), revoked, expired, insufficient_scope (403).',
      labelNames: ['reason'],
      registers: [registry],
    });
    for (const reason of REASONS) this.refusals.inc({ reason }, 0);
  }

  count(reason: ApiKeyRefusalReason): void {
    this.refusals.inc({ reason });
  }
}
