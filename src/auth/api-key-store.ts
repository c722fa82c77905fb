import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { ApiKeyIdentity, ApiKeyVerdict, InvalidKeyReason } from './api-key-identity.js';
import { isIssuedKeyFormat } from './api-keys/api-key-format.js';
import { ApiKeysRepository, type ApiKeyRecord } from './api-keys/api-keys.repository.js';
import { ExpiryWarnings } from './api-keys/expiry-warnings.js';
import { LastUsedRecorder } from './api-keys/last-used-recorder.js';
import { keyDigest } from './key-digest.js';

/** How long an answer is reused: a key revoked, or given an earlier expiry, is refused everywhere within it. */
export const KEY_CACHE_TTL_MS = 2_000;
export const KEY_CACHE_MAX_ENTRIES = 10_000;

const toCached = (record: ApiKeyRecord) => ({
  identity: { id: record.id, name: record.name, scopes: record.scopes, lineage: record.lineage },
  replacedBy: record.replacedBy,
  revoked: record.revokedAt !== null,
  expiresAt: record.expiresAt?.getTime() ?? Infinity,
});
type CachedKey = ReturnType<typeof toCached>;

const refusalOf = (key: CachedKey, now: number): InvalidKeyReason | null =>
  key.revoked ? 'revoked' : now >= key.expiresAt ? 'expired' : null;

/** Keys by SHA-256 digest, never raw: API_KEYS first, then issued keys, each answer cached (unknown ones as false). */
@Injectable()
export class ApiKeyStore {
  private readonly env = new Map<string, ApiKeyIdentity>();
  private readonly cache: LRUCache<string, CachedKey | false>;
  /** Digests lately found, not revoked (that is final, and would cost more than an unknown string): may be looked up. */
  private readonly issued = new LRUCache<string, true>({ max: KEY_CACHE_MAX_ENTRIES });

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    keys: ApiKeysRepository,
    private readonly lastUsed: LastUsedRecorder,
    private readonly expiryWarnings: ExpiryWarnings,
  ) {
    for (const { id, name, key } of config.apiKeys)
      this.env.set(keyDigest(key), { id, name, scopes: null, lineage: id });
    this.cache = new LRUCache({
      max: KEY_CACHE_MAX_ENTRIES,
      ttl: KEY_CACHE_TTL_MS,
      fetchMethod: async (digest: string) => {
        const record = await keys.findByDigest(digest);
        if (!record) return false;
        if (record.revokedAt === null) this.issued.set(digest, true);
        else this.issued.delete(digest);
        return toCached(record);
      },
    });
  }

  async verify(key: string): Promise<ApiKeyVerdict> {
    const digest = keyDigest(key);
    const fromEnv = this.env.get(digest);
    if (fromEnv) return fromEnv;
    // A hit answers without the promise fetch() always returns, nor the format check its entry already passed.
    const cached = this.cache.get(digest) ?? (isIssuedKeyFormat(key) && (await this.cache.fetch(digest)));
    if (!cached) return 'unknown';
    const now = Date.now();
    const refusal = refusalOf(cached, now);
    if (refusal !== null) return refusal;
    this.expiryWarnings.check(cached.identity.id, cached.expiresAt, now, cached.replacedBy);
    this.lastUsed.record(cached.identity.id);
    return cached.identity;
  }

  /** Why `key` is refused (null: may be valid); looked up only if `mayLookUp` or lately found, else undefined. */
  async refusalIfKnown(key: string, mayLookUp: boolean): Promise<InvalidKeyReason | null | undefined> {
    const digest = keyDigest(key);
    if (this.env.has(digest)) return null;
    if (!isIssuedKeyFormat(key)) return 'unknown';
    let known = this.cache.get(digest);
    if (known === undefined && (mayLookUp || this.issued.has(digest))) known = await this.cache.fetch(digest);
    if (known === undefined) return undefined;
    return known ? refusalOf(known, Date.now()) : 'unknown';
  }
}
