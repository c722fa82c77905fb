import type { ApiKeyIdentity } from './api-key-identity.js';

/** Where the guard looks keys up; implementations hold digests, never raw keys. */
export abstract class ApiKeyStore {
  /** The identity a presented key belongs to, or `null` when it is not a valid key. */
  abstract verify(key: string): Promise<ApiKeyIdentity | null>;
}
