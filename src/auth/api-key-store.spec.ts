import { jest } from '@jest/globals';
import type { ApiKeyIdentity } from './api-key-identity.js';
import { generateApiKey } from './api-keys/api-key-format.js';
import type { ApiKeyRecord, ApiKeysRepository } from './api-keys/api-keys.repository.js';
import { ApiKeyStore, KEY_CACHE_MAX_ENTRIES } from './api-key-store.js';
import { keyDigest } from './key-digest.js';
import { defaultConfig } from '../../test/support/config.js';
import { parseApiKeys } from '../config/app-config.js';
import { EXPIRY_WARNING_WINDOW_MS, type ExpiryWarnings } from './api-keys/expiry-warnings.js';
import type { LastUsedRecorder } from './api-keys/last-used-recorder.js';

describe('ApiKeyStore, for keys issued into the database', () => {
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
  const record = jest.fn();
  const check = jest.fn();
  let store: ApiKeyStore;

  beforeEach(() => {
    findActiveByDigest.mockReset();
    record.mockReset();
    check.mockReset();
    store = new ApiKeyStore(
      { ...defaultConfig(), apiKeys: [] },
      { findByDigest: findActiveByDigest } as unknown as ApiKeysRepository,
      { record } as unknown as LastUsedRecorder,
      { check } as unknown as ExpiryWarnings,
    );
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
    expect(await store.refusalIfKnown(key, true)).toBe('revoked');
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
      expect(await store.refusalIfKnown(key, true)).toBe('expired');
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

  it('answers why a key is refused by the same lookup by digest, only when it may, or when the digest was lately found', async () => {
    const [expired, revoked, wrong] = [generateApiKey(), generateApiKey(), generateApiKey()];
    findActiveByDigest.mockImplementation((digest) =>
      Promise.resolve(
        digest === keyDigest(expired)
          ? { ...row, expiresAt: new Date(Date.now() - 1) }
          : digest === keyDigest(revoked)
            ? { ...row, revokedAt: new Date() }
            : undefined,
      ),
    );
    expect(await store.refusalIfKnown(revoked, true)).toBe('revoked');
    findActiveByDigest.mockClear();
    expect(await store.refusalIfKnown(expired, true)).toBe('expired');
    expect(await store.refusalIfKnown(wrong, false)).toBeUndefined();
    expect(await store.refusalIfKnown(wrong, true)).toBe('unknown');
    // Both answers cached: no lookup, may or not.
    expect(await store.refusalIfKnown(wrong, false)).toBe('unknown');
    expect(findActiveByDigest).toHaveBeenCalledTimes(2);
    const cache = (store as unknown as { cache: { clear(): void } }).cache;
    cache.clear();
    expect(await store.refusalIfKnown(expired, false)).toBe('expired');
    expect(await store.refusalIfKnown(wrong, false)).toBeUndefined();
    // A revoked key found lately costs what an unknown one costs: its revocation is final, nothing is left to look up.
    expect(await store.refusalIfKnown(revoked, false)).toBeUndefined();
    expect(await store.refusalIfKnown('not-a-key', false)).toBe('unknown');
    expect(findActiveByDigest).toHaveBeenCalledTimes(3);
  });

  it('answers for a key verified a moment ago from its cached answer, without a query', async () => {
    findActiveByDigest.mockResolvedValue(row);
    const key = generateApiKey();
    await store.verify(key);
    expect(await store.refusalIfKnown(key, false)).toBeNull();
    expect(findActiveByDigest).toHaveBeenCalledTimes(1);
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
    const cache = (store as unknown as { cache: { size: number } }).cache;
    expect(cache.size).toBe(KEY_CACHE_MAX_ENTRIES);
    // The oldest answer was evicted, so it is asked again.
    await store.verify(first);
    expect(findActiveByDigest).toHaveBeenCalledTimes(KEY_CACHE_MAX_ENTRIES + 2);
  });
});

const FIRST = 'first-key-0123456789abcdef';
const SECOND = 'second-key-0123456789abcdef';

/** The store the guard is given, over these API_KEYS; none of the keys below can be an issued key, so none is looked up. */
const storeWith = (...apiKeys: string[]) => {
  const unreachable = () => {
    throw new Error('looked up in the database');
  };
  return new ApiKeyStore(
    { ...defaultConfig(), apiKeys: parseApiKeys(apiKeys.join(',')) },
    { findByDigest: unreachable } as unknown as ApiKeysRepository,
    { record: unreachable } as unknown as LastUsedRecorder,
    { check: unreachable } as unknown as ExpiryWarnings,
  );
};

describe('keyDigest', () => {
  it('is the hex SHA-256 of the key', () => {
    expect(keyDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('ApiKeyStore, for keys from API_KEYS', () => {
  it('identifies each configured key by its position alone, with every scope, as a lineage of its own', async () => {
    const store = storeWith(FIRST, SECOND);

    await expect(store.verify(FIRST)).resolves.toEqual({
      id: 'env-1',
      name: 'API_KEYS #1',
      scopes: null,
      lineage: 'env-1',
    });
    await expect(store.verify(SECOND)).resolves.toEqual({
      id: 'env-2',
      name: 'API_KEYS #2',
      scopes: null,
      lineage: 'env-2',
    });
  });

  it.each([
    ['an unknown key', 'other-key-0123456789abcdef'],
    ['a prefix of a valid key', FIRST.slice(0, -1)],
    ['a valid key with a trailing space', `${FIRST} `],
    ['a valid key in another case', FIRST.toUpperCase()],
    ['the digest of a valid key', keyDigest(FIRST)],
    ['an empty string', ''],
  ])('refuses %s', async (_case, key) => {
    await expect(storeWith(FIRST).verify(key)).resolves.toBe('unknown');
  });

  it('refuses everything when no key is configured', async () => {
    await expect(storeWith().verify(FIRST)).resolves.toBe('unknown');
  });

  it('keeps no raw key in memory', () => {
    const store = storeWith(FIRST, SECOND);

    const held = JSON.stringify([...(store as unknown as { env: Map<string, unknown> }).env]);
    expect(held).not.toContain(FIRST);
    expect(held).not.toContain(SECOND);
    expect(held).toContain(keyDigest(FIRST));
  });
});
