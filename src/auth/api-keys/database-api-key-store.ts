import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { ApiKeyIdentity, ApiKeyVerdict, InvalidKeyReason } from '../api-key-identity.js';
import { isIssuedKeyFormat } from './api-key-format.js';
import { ApiKeysRepository, type ApiKeyRecord, type KnownKey } from './api-keys.repository.js';
import { ExpiryWarnings } from './expiry-warnings.js';
import { LastUsedRecorder } from './last-used-recorder.js';

/**
 * How long an answer (valid or not) is reused: a key revoked, or given an earlier expiry (a rotation), is refused on
 * every instance within this time.
 */
export const KEY_CACHE_TTL_MS = 2_000;
/** Bounds the memory a flood of random keys can take; least recently used answers go first. */
export const KEY_CACHE_MAX_ENTRIES = 10_000;

/** What decides whether a key is still valid. */
interface Validity {
  revoked: boolean;
  /** Epoch ms; Infinity when the key never expires. */
  expiresAt: number;
}

/** A key's row as cached: the identity handed to every request, and what decides whether it is still valid. */
interface CachedKey extends Validity {
  identity: ApiKeyIdentity;
  /** The key that replaced it, named by the expiry warning; null when there is none. */
  replacedBy: string | null;
}

const validityOf = (key: Pick<KnownKey, 'revoked' | 'expiresAt'>): Validity => ({
  revoked: key.revoked,
  expiresAt: key.expiresAt?.getTime() ?? Infinity,
});

function toCached(record: ApiKeyRecord): CachedKey {
  return {
    identity: { id: record.id, name: record.name, scopes: record.scopes, lineage: record.lineage },
    replacedBy: record.replacedBy,
    ...validityOf({ revoked: record.revokedAt !== null, expiresAt: record.expiresAt }),
  };
}

/** Why a key that exists is refused at `now`, or null while it is valid. */
function refusalOf(key: Validity, now: number): 'revoked' | 'expired' | null {
  if (key.revoked) return 'revoked';
  return now >= key.expiresAt ? 'expired' : null;
}

/**
 * Keys issued with `npm run apikey -- create`. Answers are cached by digest
 * for a moment (unknown keys as `false`), concurrent lookups of the same
 * digest share one query (lru-cache's `fetch`), and strings that cannot be
 * issued keys never reach the database. The cached row carries the key's
 * scopes and expiry, so a request costs no lookup for either, and a key
 * expires on the clock, not when its cache entry does. `screen` answers from
 * that cache or from a snapshot of every key's digest and validity, taken at
 * most once per KEY_CACHE_TTL_MS and only while someone asks.
 */
@Injectable()
export class DatabaseApiKeyStore {
  private readonly cache: LRUCache<string, CachedKey | false>;
  private readonly known: LRUCache<'keys', Map<string, Validity>>;

  constructor(
    keys: ApiKeysRepository,
    private readonly lastUsed: LastUsedRecorder,
    private readonly expiryWarnings: ExpiryWarnings,
  ) {
    this.cache = new LRUCache({
      max: KEY_CACHE_MAX_ENTRIES,
      ttl: KEY_CACHE_TTL_MS,
      fetchMethod: async (digest: string) => {
        const record = await keys.findByDigest(digest);
        return record ? toCached(record) : false;
      },
    });
    this.known = new LRUCache({
      max: 1,
      ttl: KEY_CACHE_TTL_MS,
      fetchMethod: async () => new Map((await keys.findKnownKeys()).map((key) => [key.digest, validityOf(key)])),
    });
  }

  /** ApiKeyStore.screen, for the key and its digest. */
  async screen(key: string, digest: string): Promise<InvalidKeyReason | null> {
    if (!isIssuedKeyFormat(key)) return 'unknown';
    const known = this.cache.get(digest) ?? (await this.known.fetch('keys'))!.get(digest);
    return known ? refusalOf(known, Date.now()) : 'unknown';
  }

  /** ApiKeyStore.verify, for the key and its digest. */
  async verify(key: string, digest: string): Promise<ApiKeyVerdict> {
    if (!isIssuedKeyFormat(key)) return 'unknown';
    // A hit answers without the promise fetch() always returns.
    const cached = this.cache.get(digest) ?? (await this.cache.fetch(digest));
    if (!cached) return 'unknown';
    const now = Date.now();
    const refusal = refusalOf(cached, now);
    if (refusal !== null) return refusal;
    this.expiryWarnings.check(cached.identity.id, cached.expiresAt, now, cached.replacedBy);
    this.lastUsed.record(cached.identity.id);
    return cached.identity;
  }
}
