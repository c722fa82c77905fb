import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { ApiKeyIdentity } from '../api-key-identity.js';
import { ApiKeyStore } from '../api-key-store.js';
import { keyDigest } from '../key-digest.js';
import { isIssuedKeyFormat } from './api-key-format.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { LastUsedRecorder } from './last-used-recorder.js';

/** How long an answer (valid or not) is reused: a revoked key is refused on every instance within this time. */
export const KEY_CACHE_TTL_MS = 2_000;
/** Bounds the memory a flood of random keys can take; least recently used answers go first. */
export const KEY_CACHE_MAX_ENTRIES = 10_000;

/**
 * Keys issued with `npm run apikey -- create`. Answers are cached by digest
 * for a moment (unknown keys as `false`), concurrent lookups of the same
 * digest share one query (lru-cache's `fetch`), and strings that cannot be
 * issued keys never reach the database. `isKnown` answers from that cache or
 * from a snapshot of every active digest, taken at most once per
 * KEY_CACHE_TTL_MS and only while someone asks.
 */
@Injectable()
export class DatabaseApiKeyStore extends ApiKeyStore {
  private readonly cache: LRUCache<string, ApiKeyIdentity | false>;
  private readonly active: LRUCache<'digests', Set<string>>;

  constructor(
    keys: ApiKeysRepository,
    private readonly lastUsed: LastUsedRecorder,
  ) {
    super();
    this.cache = new LRUCache({
      max: KEY_CACHE_MAX_ENTRIES,
      ttl: KEY_CACHE_TTL_MS,
      fetchMethod: async (digest: string) => (await keys.findActiveByDigest(digest)) ?? false,
    });
    this.active = new LRUCache({
      max: 1,
      ttl: KEY_CACHE_TTL_MS,
      fetchMethod: async () => new Set(await keys.findActiveDigests()),
    });
  }

  isKnown(key: string): Promise<boolean> {
    return this.isKnownDigest(key, keyDigest(key));
  }

  /** `isKnown` for a caller that already holds the key's digest. */
  async isKnownDigest(key: string, digest: string): Promise<boolean> {
    if (!isIssuedKeyFormat(key)) return false;
    const cached = this.cache.get(digest);
    if (cached !== undefined) return cached !== false;
    return (await this.active.fetch('digests'))!.has(digest);
  }

  verify(key: string): Promise<ApiKeyIdentity | null> {
    return this.verifyDigest(key, keyDigest(key));
  }

  /** `verify` for a caller that already holds the key's digest. */
  async verifyDigest(key: string, digest: string): Promise<ApiKeyIdentity | null> {
    if (!isIssuedKeyFormat(key)) return null;
    // A hit answers without the promise fetch() always returns.
    const identity = this.cache.get(digest) ?? (await this.cache.fetch(digest));
    if (!identity) return null;
    this.lastUsed.record(identity.id);
    return identity;
  }
}
