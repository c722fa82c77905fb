import { jest } from '@jest/globals';
import type { ApiKeyIdentity } from '../api-key-identity.js';
import { generateApiKey } from './api-key-format.js';
import type { ApiKeysRepository } from './api-keys.repository.js';
import { keyDigest } from '../key-digest.js';
import { DatabaseApiKeyStore, KEY_CACHE_MAX_ENTRIES } from './database-api-key-store.js';
import type { LastUsedRecorder } from './last-used-recorder.js';

describe('DatabaseApiKeyStore', () => {
  const identity: ApiKeyIdentity = { id: '7', name: 'acme' };
  const findActiveByDigest = jest.fn<(digest: string) => Promise<ApiKeyIdentity | undefined>>();
  const findActiveDigests = jest.fn<() => Promise<string[]>>();
  const record = jest.fn();
  let store: DatabaseApiKeyStore;

  beforeEach(() => {
    findActiveByDigest.mockReset();
    findActiveDigests.mockReset();
    record.mockReset();
    store = new DatabaseApiKeyStore(
      { findActiveByDigest, findActiveDigests } as unknown as ApiKeysRepository,
      { record } as unknown as LastUsedRecorder,
    );
  });

  it('asks the database once for a burst of the same valid key, and records its use', async () => {
    findActiveByDigest.mockResolvedValue(identity);
    const key = generateApiKey();
    const answers = await Promise.all(Array.from({ length: 50 }, () => store.verify(key)));
    expect(answers.every((answer) => answer === identity)).toBe(true);
    expect(await store.verify(key)).toBe(identity);
    expect(findActiveByDigest).toHaveBeenCalledTimes(1);
    expect(record).toHaveBeenCalledWith('7');
  });

  it('caches unknown keys too', async () => {
    findActiveByDigest.mockResolvedValue(undefined);
    const key = generateApiKey();
    expect(await store.verify(key)).toBeNull();
    expect(await store.verify(key)).toBeNull();
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

  it('tells whether a key may be valid from one snapshot of the active digests, however many keys are asked', async () => {
    const valid = generateApiKey();
    findActiveDigests.mockResolvedValue([keyDigest(valid)]);
    const wrong = Array.from({ length: 200 }, () => generateApiKey());
    const answers = await Promise.all([valid, ...wrong].map((key) => store.isKnown(key)));
    expect(answers[0]).toBe(true);
    expect(answers.slice(1).every((known) => !known)).toBe(true);
    expect(await store.isKnown('not-a-key')).toBe(false);
    expect(findActiveDigests).toHaveBeenCalledTimes(1);
    expect(findActiveByDigest).not.toHaveBeenCalled();
  });

  it('answers isKnown from the cached answer of a key verified a moment ago, without a query', async () => {
    findActiveByDigest.mockResolvedValue(identity);
    const key = generateApiKey();
    await store.verify(key);
    expect(await store.isKnown(key)).toBe(true);
    expect(findActiveDigests).not.toHaveBeenCalled();
  });

  it('refuses strings that cannot be issued keys without a query', async () => {
    expect(await store.verify('not-a-key')).toBeNull();
    expect(await store.verify('pet_short')).toBeNull();
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
