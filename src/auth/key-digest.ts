import { createHash } from 'node:crypto';

/** The SHA-256 digest of a key, hex encoded: the only form in which keys are held. */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
