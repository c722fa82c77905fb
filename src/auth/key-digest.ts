import { hash } from 'node:crypto';

/** The SHA-256 digest of a key, hex encoded: the only form in which keys are held. */
export const keyDigest = (key: string): string => hash('sha256', key, 'hex');
