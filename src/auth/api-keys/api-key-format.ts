import { randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'pet_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** About 190 bits. */
const RANDOM_LENGTH = 32;
const PUBLIC_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;
// 248 is the largest multiple of 62 below 256: bytes from 248 up are dropped so every character is equally likely.
const UNBIASED_LIMIT = 256 - (256 % ALPHABET.length);
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH}}$`);

/** A new key: API_KEY_PREFIX and 32 base62 characters from the CSPRNG (rejection sampling, no modulo bias). */
export function generateApiKey(random: (size: number) => Buffer = randomBytes): string {
  let body = '';
  while (body.length < RANDOM_LENGTH) {
    for (const byte of random(RANDOM_LENGTH)) {
      if (byte < UNBIASED_LIMIT && body.length < RANDOM_LENGTH) body += ALPHABET[byte % ALPHABET.length];
    }
  }
  return API_KEY_PREFIX + body;
}

export function isIssuedKeyFormat(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function publicPrefix(key: string): string {
  return key.slice(0, PUBLIC_PREFIX_LENGTH);
}
