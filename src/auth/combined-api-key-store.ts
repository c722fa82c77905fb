import { Injectable } from '@nestjs/common';
import { DatabaseApiKeyStore } from './api-keys/database-api-key-store.js';
import type { ApiKeyVerdict, InvalidKeyReason } from './api-key-identity.js';
import { ApiKeyStore } from './api-key-store.js';
import { EnvApiKeyStore } from './env-api-key-store.js';
import { keyDigest } from './key-digest.js';

/**
 * Keys from API_KEYS (bootstrap, development) first, from memory; then keys
 * issued into the database. The key is digested once for both.
 */
@Injectable()
export class CombinedApiKeyStore extends ApiKeyStore {
  constructor(
    private readonly env: EnvApiKeyStore,
    private readonly database: DatabaseApiKeyStore,
  ) {
    super();
  }

  async verify(key: string): Promise<ApiKeyVerdict> {
    const digest = keyDigest(key);
    return this.env.identityFor(digest) ?? this.database.verifyDigest(key, digest);
  }

  async screen(key: string): Promise<InvalidKeyReason | null> {
    const digest = keyDigest(key);
    return this.env.identityFor(digest) !== null ? null : this.database.screenDigest(key, digest);
  }
}
