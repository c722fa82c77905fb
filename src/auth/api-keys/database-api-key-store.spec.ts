import { jest } from '@jest/globals';
import type { ApiKeyIdentity } from '../api-key-identity.js';
import { generateApiKey } from './api-key-format.js';
import type { ApiKeyRecord, ApiKeysRepository, KnownKey } from './api-keys.repository.js';
import { ApiKeyStore } from '../api-key-store.js';
import { EnvApiKeyStore } from '../env-api-key-store.js';
import { keyDigest } from '../key-digest.js';
import { loadConfig } from '../../config/app-config.js';
import { DatabaseApiKeyStore, KEY_CACHE_MAX_ENTRIES } from './database-api-key-store.js';
import { EXPIRY_WARNING_WINDOW_MS, type ExpiryWarnings } from './expiry-warnings.js';
import type { LastUsedRecorder } from './last-used-recorder.js';

describe('ApiKeyStore, for keys issued into the database (DatabaseApiKeyStore)', () => {
  const row: ApiKeyRecord = {
    id: '7',
    name: 'acme',
    scopes: ['pets:read'],
    expiresAt: null,
    revokedAt: null,
    lineage: '4',
    replacedBy: null,
  };
  const identity: ApiKeyIdentity = { id: '7', name: 'acme', scopes: ['pets:read'], lineage: '4' };
  const findActiveByDigest = jest.fn<(digest: string) => Promise<ApiKeyRecord | undefined>>();
  const findKnownKeys = jest.fn<() => Promise<KnownKey[]>>();
  const record = jest.fn();
  const check = jest.fn();
  let database: DatabaseApiKeyStore;
  let store: ApiKeyStore;

  beforeEach(() => {
    findActiveByDigest.mockReset();
    findKnownKeys.mockReset();
    record.mockReset();
    check.mockReset();
    database = new DatabaseApiKeyStore(
      { findByDigest: findActiveByDigest, findKnownKeys } as unknown as ApiKeysRepository,
      { record } as unknown as LastUsedRecorder,
      { check } as unknown as ExpiryWarnings,
    );
    store = new ApiKeyStore(new EnvApiKeyStore({ ...loadConfig({}), apiKeys: [] }), database);
  });

  it('asks the database once for a burst of the same valid key, and records its use', async () => {
    findActiveByDigest.mockResolvedValue(row);
    const key = generateApiKey();
    const answers = await Promise.all(Array.from({ length: 50 }, () => store.verify(key)));
    expect(answers[0]).toEqual(identity);
    // One identity object, cached with the key, serves every request: no allocation per request.
    expect(answers.every((answer) => answer === answers[0])).toBe(true);
    expect(await store.verify(key)).toBe(answers[0]);
    expect(findActiveByDigest).toHaveBeenCalledTimes(1);
    expect(record).toHaveBeenCalledWith('7');
  });

  it('tells a revoked key from an unknown one, and does not record its use', async () => {
    findActiveByDigest.mockResolvedValue({ ...row, revokedAt: new Date() });
    const key = generateApiKey();
    expect(await store.verify(key)).toBe('revoked');
    expect(await store.screen(key)).toBe('revoked');
    expect(record).not.toHaveBeenCalled();
  });

  it('refuses a key as expired once the clock passes its expiry, even while its answer is cached', async () => {
    const expiresAt = Date.now() + 60_000;
    findActiveByDigest.mockResolvedValue({ ...row, expiresAt: new Date(expiresAt) });
    const key = generateApiKey();
    expect(await store.verify(key)).toEqual(identity);
    expect(check).toHaveBeenCalledWith('7', expiresAt, expect.any(Number), null);
    const now = jest.spyOn(Date, 'now').mockReturnValue(expiresAt);
    try {
      expect(await store.verify(key)).toBe('expired');
      expect(await store.screen(key)).toBe('expired');
    } finally {
      now.mockRestore();
    }
    expect(findActiveByDigest).toHaveBeenCalledTimes(1);
  });

  it('hands a key without expiry to the expiry warnings as never expiring', async () => {
    findActiveByDigest.mockResolvedValue(row);
    await store.verify(generateApiKey());
    expect(check.mock.calls[0][1]).toBe(Infinity);
    expect(Infinity - Date.now() > EXPIRY_WARNING_WINDOW_MS).toBe(true);
  });

  it('caches unknown keys too', async () => {
    findActiveByDigest.mockResolvedValue(undefined);
    const key = generateApiKey();
    expect(await store.verify(key)).toBe('unknown');
    expect(await store.verify(key)).toBe('unknown');
    expect(findActiveByDigest).toHaveBeenCalledTimes(1);
    expect(record).not.toHaveBeenCalled();
  });

  it('looks keys up by digest, never by the key itself', async () => {
    findActiveByDigest.mockResolvedValue(undefined);
    const key = generateApiKey();
    await store.verify(key);
    expect(findActiveByDigest.mock.calls[0][0]).toMatch(/^[0-9a-f]{64}$/);
    expect(findActiveByDigest.mock.calls[0][0]).not.toContain(key.slice(4));
  });

  it('screens keys from one snapshot of every key, however many keys are asked: unknown, expired, revoked or maybe valid', async () => {
    const [valid, expired, revoked] = [generateApiKey(), generateApiKey(), generateApiKey()];
    findKnownKeys.mockResolvedValue([
      { digest: keyDigest(valid), revoked: false, expiresAt: new Date(Date.now() + 60_000) },
      { digest: keyDigest(expired), revoked: false, expiresAt: new Date(Date.now() - 1) },
      { digest: keyDigest(revoked), revoked: true, expiresAt: null },
    ]);
    const wrong = Array.from({ length: 200 }, () => generateApiKey());
    const answers = await Promise.all([valid, expired, revoked, ...wrong].map((key) => store.screen(key)));
    expect(answers.slice(0, 3)).toEqual([null, 'expired', 'revoked']);
    expect(answers.slice(3).every((answer) => answer === 'unknown')).toBe(true);
    expect(await store.screen('not-a-key')).toBe('unknown');
    expect(findKnownKeys).toHaveBeenCalledTimes(1);
    expect(findActiveByDigest).not.toHaveBeenCalled();
  });

  it('screens a key verified a moment ago from its cached answer, without a query', async () => {
    findActiveByDigest.mockResolvedValue(row);
    const key = generateApiKey();
    await store.verify(key);
    expect(await store.screen(key)).toBeNull();
    expect(findKnownKeys).not.toHaveBeenCalled();
  });

  it('hands the expiry warnings the key that replaced it', async () => {
    findActiveByDigest.mockResolvedValue({ ...row, replacedBy: '9', expiresAt: new Date(Date.now() + 60_000) });
    await store.verify(generateApiKey());
    expect(check.mock.calls[0][3]).toBe('9');
  });

  it('refuses strings that cannot be issued keys without a query', async () => {
    expect(await store.verify('not-a-key')).toBe('unknown');
    expect(await store.verify('pet_short')).toBe('unknown');
    expect(findActiveByDigest).not.toHaveBeenCalled();
  });

  it('keeps at most KEY_CACHE_MAX_ENTRIES answers under a flood of random keys', async () => {
    findActiveByDigest.mockResolvedValue(undefined);
    const first = generateApiKey();
    await store.verify(first);
    for (let i = 0; i < KEY_CACHE_MAX_ENTRIES; i += 1) await store.verify(generateApiKey());
    const cache = (database as unknown as { cache: { size: number } }).cache;
    expect(cache.size).toBe(KEY_CACHE_MAX_ENTRIES);
    // The oldest answer was evicted, so it is asked again.
    await store.verify(first);
    expect(findActiveByDigest).toHaveBeenCalledTimes(KEY_CACHE_MAX_ENTRIES + 2);
  });
});
