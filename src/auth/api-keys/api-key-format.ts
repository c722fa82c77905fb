import { randomInt } from 'node:crypto';

export const API_KEY_PREFIX = 'pet_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** About 190 bits. */
const RANDOM_LENGTH = 32;
const PUBLIC_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH}}$`);

/** A new key: the prefix and RANDOM_LENGTH base62 characters from the CSPRNG (randomInt: no modulo bias). */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < RANDOM_LENGTH; i += 1) body += ALPHABET[randomInt(ALPHABET.length)];
  return API_KEY_PREFIX + body;
}

export const isIssuedKeyFormat = (key: string): boolean => KEY_PATTERN.test(key);
export const publicPrefix = (key: string): string => key.slice(0, PUBLIC_PREFIX_LENGTH);
