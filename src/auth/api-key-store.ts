import { Injectable } from '@nestjs/common';
import { DatabaseApiKeyStore } from './api-keys/database-api-key-store.js';
import type { ApiKeyVerdict, InvalidKeyReason } from './api-key-identity.js';
import { EnvApiKeyStore } from './env-api-key-store.js';
import { keyDigest } from './key-digest.js';

/**
 * Where the guard looks keys up: keys from API_KEYS (bootstrap, development) first, from memory; then keys issued
 * into the database. Both hold digests, never raw keys; a presented key is digested once for both.
 */
@Injectable()
export class ApiKeyStore {
  constructor(
    private readonly env: EnvApiKeyStore,
    private readonly database: DatabaseApiKeyStore,
  ) {}

  /** The identity a presented key belongs to, or why it is refused (`unknown`, `revoked`, `expired`). */
  async verify(key: string): Promise<ApiKeyVerdict> {
    const digest = keyDigest(key);
    return this.env.identityFor(digest) ?? this.database.verify(key, digest);
  }

  /**
   * Why `key` is refused, when that is certain without a lookup of its own (from memory, or a snapshot of every
   * key shared by all callers): what an address over its failed-authentication budget is asked before its key is
   * verified. `unknown`, `revoked` and `expired` are certain; null means the key may be valid and needs `verify`.
   */
  async screen(key: string): Promise<InvalidKeyReason | null> {
    const digest = keyDigest(key);
    return this.env.identityFor(digest) !== null ? null : this.database.screen(key, digest);
  }
}
