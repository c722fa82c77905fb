import { Injectable } from '@nestjs/common';
import type { ApiKeyIdentity } from '../api-key-identity.js';
import { ApiKeyStore } from '../api-key-store.js';
import { keyDigest } from '../key-digest.js';
import { isIssuedKeyFormat } from './api-key-format.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { BoundedTtlCache } from '../bounded-ttl-cache.js';
import { LastUsedRecorder } from './last-used-recorder.js';

/** How long an answer (valid or not) is reused: a revoked key is refused on every instance within this time. */
export const KEY_CACHE_TTL_MS = 2_000;
/** Bounds the memory a flood of random keys can take; least recently used answers go first. */
export const KEY_CACHE_MAX_ENTRIES = 10_000;

/**
 * Keys issued with `npm run apikey -- create`. Answers are cached by digest
 * for a moment, concurrent lookups of the same digest share one query, and
 * strings that cannot be issued keys never reach the database.
 */
@Injectable()
export class DatabaseApiKeyStore extends ApiKeyStore {
  private readonly cache = new BoundedTtlCache<string, ApiKeyIdentity | null>(KEY_CACHE_MAX_ENTRIES, KEY_CACHE_TTL_MS);
  private readonly lookups = new Map<string, Promise<ApiKeyIdentity | null>>();

  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly lastUsed: LastUsedRecorder,
  ) {
    super();
  }

  verify(key: string): Promise<ApiKeyIdentity | null> {
    return this.verifyDigest(key, keyDigest(key));
  }

  /** `verify` for a caller that already holds the key's digest. */
  async verifyDigest(key: string, digest: string): Promise<ApiKeyIdentity | null> {
    if (!isIssuedKeyFormat(key)) return null;
    const cached = this.cache.get(digest);
    const identity = cached === undefined ? await this.lookup(digest) : cached;
    if (identity) this.lastUsed.record(identity.id);
    return identity;
  }

  private lookup(digest: string): Promise<ApiKeyIdentity | null> {
    let pending = this.lookups.get(digest);
    if (!pending) {
      pending = this.keys
        .findActiveByDigest(digest)
        .then((found) => {
          const identity = found ?? null;
          this.cache.set(digest, identity);
          return identity;
        })
        .finally(() => this.lookups.delete(digest));
      this.lookups.set(digest, pending);
    }
    return pending;
  }
}
