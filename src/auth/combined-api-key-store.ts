import { Injectable } from '@nestjs/common';
import { DatabaseApiKeyStore } from '../api-keys/database-api-key-store.js';
import type { ApiKeyIdentity } from './api-key-identity.js';
import { ApiKeyStore } from './api-key-store.js';
import { EnvApiKeyStore } from './env-api-key-store.js';

/** Keys from API_KEYS (bootstrap, development) first, from memory; then keys issued into the database. */
@Injectable()
export class CombinedApiKeyStore extends ApiKeyStore {
  constructor(
    private readonly env: EnvApiKeyStore,
    private readonly database: DatabaseApiKeyStore,
  ) {
    super();
  }

  async verify(key: string): Promise<ApiKeyIdentity | null> {
    return (await this.env.verify(key)) ?? this.database.verify(key);
  }
}
