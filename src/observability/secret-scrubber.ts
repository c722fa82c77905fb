import { API_KEY_PREFIX } from '../auth/api-keys/api-key-format.js';
import type { AppConfig } from '../config/app-config.js';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `char` percent-encoded, its hex digits in either case (`%5F`, `%5f`), as a URL may carry it. Each letter as a class:
 * the `(?i:…)` modifier group is not in Node 22's V8.
 */
const percentEncoded = (char: string) =>
  `%${char
    .charCodeAt(0)
    .toString(16)
    .padStart(2, '0')
    .replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`)}`;
/** A pattern for `text` whose characters may each be percent-encoded; `escape` gives a character's literal form. */
const encodable = (text: string, escape: (char: string) => string = (char) => char) =>
  [...text].map((char) => `(?:${escapeRegExp(escape(char))}|${percentEncoded(char)})`).join('');

// pino's redact removes fields by path; a key can appear inside any value (an error message, a URL), encoded or not.
const KEY_SHAPED = `${encodable(API_KEY_PREFIX)}(?:[A-Za-z0-9_-]|%[0-9A-Fa-f]{2}){16,}`;
// A bearer credential (RFC 6750 b64token), and an Authorization header value, whatever it holds.
const BEARER_VALUE = '(?<bearer>[Bb]earer\\s+)[A-Za-z0-9._~+/-]+=*';
const AUTHORIZATION_VALUE = '(?<authorization>"authorization"\\s*:\\s*")[^"]*';

/** The secrets the service is configured with: the keys of API_KEYS and the metrics token. */
export function configuredSecrets(config: Pick<AppConfig, 'apiKeys' | 'metricsToken'>): string[] {
  const keys = config.apiKeys.map(({ key }) => key);
  return config.metricsToken ? [...keys, config.metricsToken] : keys;
}

/** Replaces the literals, and anything shaped like a key, a bearer credential or an Authorization value. */
function scrubberOf(literals: readonly string[]): (text: string) => string {
  const pattern = new RegExp([AUTHORIZATION_VALUE, BEARER_VALUE, KEY_SHAPED, ...literals].join('|'), 'g');
  return (text) =>
    text.replace(pattern, (...args) => {
      const groups = args[args.length - 1] as { bearer?: string; authorization?: string };
      return `${groups.authorization ?? groups.bearer ?? ''}[redacted]`;
    });
}

/** For serialized log lines, where a secret appears JSON-escaped. */
export const secretScrubber = (secrets: readonly string[]) =>
  scrubberOf(secrets.map((secret) => encodable(secret, (char) => JSON.stringify(char).slice(1, -1))));

/** For plain strings (a span's name and attribute values). */
export const textScrubber = (secrets: readonly string[]) => scrubberOf(secrets.map((secret) => encodable(secret)));
