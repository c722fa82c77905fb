import type { ApiKeyVerdict } from './api-key-identity.js';

/** Where the guard looks keys up; implementations hold digests, never raw keys. */
export abstract class ApiKeyStore {
  /** The identity a presented key belongs to, or why it is refused (`unknown`, `revoked`, `expired`). */
  abstract verify(key: string): Promise<ApiKeyVerdict>;

  /**
   * Whether `key` may be valid, answered without a lookup of its own (from memory, or a snapshot of the active
   * keys shared by all callers): what an address over its failed-authentication budget is asked before its key
   * is verified. `false` is certain; `true` still needs `verify` (a revoked key may be in the snapshot).
   */
  abstract isKnown(key: string): Promise<boolean>;
}
