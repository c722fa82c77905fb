import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { ApiKeyIdentity, ApiKeyVerdict } from '../api-key-identity.js';
import { ApiKeyStore } from '../api-key-store.js';
import { keyDigest } from '../key-digest.js';
import { isIssuedKeyFormat } from './api-key-format.js';
import { ApiKeysRepository, type ApiKeyRecord } from './api-keys.repository.js';
import { ExpiryWarnings } from './expiry-warnings.js';
import { LastUsedRecorder } from './last-used-recorder.js';

/**
 * How long an answer (valid or not) is reused: a key revoked, or given an earlier expiry (a rotation), is refused on
 * every instance within this time.
 */
export const KEY_CACHE_TTL_MS = 2_000;
/** Bounds the memory a flood of random keys can take; least recently used answers go first. */
export const KEY_CACHE_MAX_ENTRIES = 10_000;

/** A key's row as cached: the identity handed to every request, and what decides whether it is still valid. */
interface CachedKey {
  identity: ApiKeyIdentity;
  revoked: boolean;
  /** Epoch ms; Infinity when the key never expires. */
  expiresAt: number;
}

function toCached(record: ApiKeyRecord): CachedKey {
  return {
    identity: { id: record.id, name: record.name, scopes: record.scopes },
    revoked: record.revokedAt !== null,
    expiresAt: record.expiresAt?.getTime() ?? Infinity,
  };
}

/**
 * Keys issued with `npm run apikey -- create`. Answers are cached by digest
 * for a moment (unknown keys as `false`), concurrent lookups of the same
 * digest share one query (lru-cache's `fetch`), and strings that cannot be
 * issued keys never reach the database. The cached row carries the key's
 * scopes and expiry, so a request costs no lookup for either, and a key
 * expires on the clock, not when its cache entry does. `isKnown` answers from
 * that cache or from a snapshot of every active digest, taken at most once per
 * KEY_CACHE_TTL_MS and only while someone asks.
 */
@Injectable()
export class DatabaseApiKeyStore extends ApiKeyStore {
  private readonly cache: LRUCache<string, CachedKey | false>;
  private readonly active: LRUCache<'digests', Set<string>>;

  constructor(
    keys: ApiKeysRepository,
    private readonly lastUsed: LastUsedRecorder,
    private readonly expiryWarnings: ExpiryWarnings,
  ) {
    super();
    this.cache = new LRUCache({
      max: KEY_CACHE_MAX_ENTRIES,
      ttl: KEY_CACHE_TTL_MS,
      fetchMethod: async (digest: string) => {
        const record = await keys.findByDigest(digest);
        return record ? toCached(record) : false;
      },
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
    if (cached !== undefined) return cached !== false && !cached.revoked && Date.now() < cached.expiresAt;
    return (await this.active.fetch('digests'))!.has(digest);
  }

  verify(key: string): Promise<ApiKeyVerdict> {
    return this.verifyDigest(key, keyDigest(key));
  }

  /** `verify` for a caller that already holds the key's digest. */
  async verifyDigest(key: string, digest: string): Promise<ApiKeyVerdict> {
    if (!isIssuedKeyFormat(key)) return 'unknown';
    // A hit answers without the promise fetch() always returns.
    const cached = this.cache.get(digest) ?? (await this.cache.fetch(digest));
    if (!cached) return 'unknown';
    if (cached.revoked) return 'revoked';
    const now = Date.now();
    if (now >= cached.expiresAt) return 'expired';
    this.expiryWarnings.check(cached.identity.id, cached.expiresAt, now);
    this.lastUsed.record(cached.identity.id, now);
    return cached.identity;
  }
}
