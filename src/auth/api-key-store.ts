import type { ApiKeyVerdict, InvalidKeyReason } from './api-key-identity.js';

/** Where the guard looks keys up; implementations hold digests, never raw keys. */
export abstract class ApiKeyStore {
  /** The identity a presented key belongs to, or why it is refused (`unknown`, `revoked`, `expired`). */
  abstract verify(key: string): Promise<ApiKeyVerdict>;

  /**
   * Why `key` is refused, when that is certain without a lookup of its own (from memory, or a snapshot of every
   * key shared by all callers): what an address over its failed-authentication budget is asked before its key is
   * verified. `unknown`, `revoked` and `expired` are certain; null means the key may be valid and needs `verify`.
   */
  abstract screen(key: string): Promise<InvalidKeyReason | null>;
}
