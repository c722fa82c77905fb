import type { AppConfig } from '../config/app-config.js';

// Hand-written: pino's redact removes fields by path; keys can appear inside any value (an error message, a URL).
/** The shape of the keys the service issues (`pet_…`), whatever their origin. */
const KEY_SHAPED = 'pet_[A-Za-z0-9_-]{16,}';
// A bearer credential written out (RFC 6750 b64token), and an Authorization header value, whatever it holds.
const BEARER_VALUE = '(?<bearer>[Bb]earer\\s+)[A-Za-z0-9._~+/-]+=*';
const AUTHORIZATION_VALUE = '(?<authorization>"authorization"\\s*:\\s*")[^"]*';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The secrets the service is configured with: the keys of API_KEYS and the metrics token. */
export function configuredSecrets(config: Pick<AppConfig, 'apiKeys' | 'metricsToken'>): string[] {
  return config.metricsToken ? [...config.apiKeys, config.metricsToken] : [...config.apiKeys];
}

/** The one rule: the literals given, and anything shaped like a key, a bearer credential or an Authorization value. */
function scrubberOf(literals: readonly string[]): (text: string) => string {
  const pattern = new RegExp([AUTHORIZATION_VALUE, BEARER_VALUE, KEY_SHAPED, ...literals].join('|'), 'g');
  return (text) =>
    text.replace(pattern, (...args) => {
      const groups = args[args.length - 1] as { bearer?: string; authorization?: string };
      return `${groups.authorization ?? groups.bearer ?? ''}[redacted]`;
    });
}

/**
 * A last line of defence applied to every serialized log line: whatever slips
 * into a message, an error or a request id, known secrets and anything shaped
 * like a key or a bearer credential is replaced before the line is written.
 */
export function secretScrubber(secrets: readonly string[]): (line: string) => string {
  // Lines are JSON, so a secret appears there in its JSON-escaped form.
  return scrubberOf(secrets.map((secret) => escapeRegExp(JSON.stringify(secret).slice(1, -1))));
}

/** The same rule for plain strings (a span's name and attribute values), where a secret appears as it is. */
export function textScrubber(secrets: readonly string[]): (text: string) => string {
  return scrubberOf(secrets.map(escapeRegExp));
}
