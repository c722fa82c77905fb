import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/app-config.js';
import type { ApiKeyIdentity } from './api-key-identity.js';
import { keyDigest } from './key-digest.js';

/**
 * Keys from `API_KEYS`. Only their digests stay in memory; a presented key is
 * digested and looked up by digest, so no comparison ever runs on raw key
 * bytes and its timing reveals nothing about a valid key. They have every scope
 * and never expire. Each is named by its
 * position (`env-1`, `env-2` …), never by anything derived from it: ids appear in
 * logs and metric labels, where part of a digest would let a weak key be guessed offline.
 */
@Injectable()
export class EnvApiKeyStore {
  private readonly identities = new Map<string, ApiKeyIdentity>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    config.apiKeys.forEach((key, index) => {
      const digest = keyDigest(key);
      const id = `env-${index + 1}`;
      this.identities.set(digest, { id, name: `API_KEYS #${index + 1}`, scopes: null, lineage: id });
    });
  }

  /** The identity of the key with this digest, or null when API_KEYS has none. */
  identityFor(digest: string): ApiKeyIdentity | null {
    return this.identities.get(digest) ?? null;
  }
}
