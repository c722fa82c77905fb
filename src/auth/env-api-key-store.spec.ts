import { loadConfig } from '../config/app-config.js';
import { DatabaseApiKeyStore } from './api-keys/database-api-key-store.js';
import type { ApiKeysRepository } from './api-keys/api-keys.repository.js';
import type { ExpiryWarnings } from './api-keys/expiry-warnings.js';
import type { LastUsedRecorder } from './api-keys/last-used-recorder.js';
import { ApiKeyStore } from './api-key-store.js';
import { EnvApiKeyStore } from './env-api-key-store.js';
import { keyDigest } from './key-digest.js';

const FIRST = 'first-key-0123456789abcdef';
const SECOND = 'second-key-0123456789abcdef';

const envKeys = (...apiKeys: string[]) => new EnvApiKeyStore({ ...loadConfig({}), apiKeys });
/** The store the guard is given, over these API_KEYS; none of the keys below can be an issued key, so none is looked up. */
const storeWith = (...apiKeys: string[]) => {
  const unreachable = () => {
    throw new Error('looked up in the database');
  };
  const database = new DatabaseApiKeyStore(
    { findByDigest: unreachable, findKnownKeys: unreachable } as unknown as ApiKeysRepository,
    { record: unreachable } as unknown as LastUsedRecorder,
    { check: unreachable } as unknown as ExpiryWarnings,
  );
  return new ApiKeyStore(envKeys(...apiKeys), database);
};

describe('keyDigest', () => {
  it('is the hex SHA-256 of the key', () => {
    expect(keyDigest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('ApiKeyStore, for keys from API_KEYS (EnvApiKeyStore)', () => {
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
    const store = envKeys(FIRST, SECOND);

    const held = JSON.stringify([...(store as unknown as { identities: Map<string, unknown> }).identities]);
    expect(held).not.toContain(FIRST);
    expect(held).not.toContain(SECOND);
    expect(held).toContain(keyDigest(FIRST));
  });
});
