import type { ApiKeyIdentity } from './api-key-identity.js';

/** Where the guard looks keys up; implementations hold digests, never raw keys. */
export abstract class ApiKeyStore {
  /** The identity a presented key belongs to, or `null` when it is not a valid key. */
  abstract verify(key: string): Promise<ApiKeyIdentity | null>;

  /**
   * Whether `key` may be valid, answered without a lookup of its own (from memory, or a snapshot of the active
   * keys shared by all callers): what an address over its failed-authentication budget is asked before its key
   * is verified. `false` is certain; `true` still needs `verify` (a revoked key may be in the snapshot).
   */
  abstract isKnown(key: string): Promise<boolean>;
}
