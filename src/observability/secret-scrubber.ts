import { API_KEY_PREFIX } from '../auth/api-keys/api-key-format.js';
import type { AppConfig } from '../config/app-config.js';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// pino's redact removes fields by path; a key can appear inside any value (an error message, a URL), encoded or not.
const KEY_SHAPED = `${escapeRegExp(API_KEY_PREFIX)}[A-Za-z0-9_-]{16,}`;
// A bearer credential (RFC 6750 b64token), and an Authorization header value, whatever it holds.
const BEARER_VALUE = '(?<bearer>[Bb]earer\\s+)[A-Za-z0-9._~+/-]+=*';
const AUTHORIZATION_VALUE = '(?<authorization>"authorization"\\s*:\\s*")[^"]*';
/** A path segment or query value (RFC 3986 pchar, less `=` and `&`): what percent-encoding can hide a secret in. */
const ENCODABLE_RUN = /(?:[\w.~!$'()*+,;:@-]|%[0-9A-Fa-f]{2})+/g;
/** Decodings tried before a run that still changes is taken for a disguise; no client encodes a URL this often. */
const MAX_DECODINGS = 4;

/** The secrets the service is configured with: the keys of API_KEYS and the metrics token. */
export function configuredSecrets(config: Pick<AppConfig, 'apiKeys' | 'metricsToken'>): string[] {
  const keys = config.apiKeys.map(({ key }) => key);
  return config.metricsToken ? [...keys, config.metricsToken] : keys;
}

/** `run` percent-decoded until stable, byte by byte (so no sequence makes it throw); null if still changing. */
function decoded(run: string): string | null {
  for (let round = 0; round < MAX_DECODINGS; round += 1) {
    const next = run.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === run) return run;
    run = next;
  }
  return null;
}

/**
 * Replaces the literals (as `escape` gives them) and anything shaped like a key, a bearer credential or Authorization
 * value; then, whole, a percent-encoded run that holds any of them once decoded, however often (`pet%255F…`).
 */
function scrubberOf(secrets: readonly string[], escape: (secret: string) => string): (text: string) => string {
  const of = (literals: string[]) => new RegExp([AUTHORIZATION_VALUE, BEARER_VALUE, KEY_SHAPED, ...literals].join('|'));
  const plain = of(secrets.map(escapeRegExp));
  const pattern = new RegExp(of(secrets.map((secret) => escapeRegExp(escape(secret)))), 'g');
  const hidden = (run: string) => {
    if (!run.includes('%')) return run;
    const text = decoded(run);
    return text === null || plain.test(text) ? '[redacted]' : run;
  };
  return (text) => {
    const scrubbed = text.replace(pattern, (...args) => {
      const groups = args[args.length - 1] as { bearer?: string; authorization?: string };
      return `${groups.authorization ?? groups.bearer ?? ''}[redacted]`;
    });
    return scrubbed.includes('%') ? scrubbed.replace(ENCODABLE_RUN, hidden) : scrubbed;
  };
}

/** For serialized log lines, where a secret appears JSON-escaped. */
export const secretScrubber = (secrets: readonly string[]) =>
  scrubberOf(secrets, (secret) => JSON.stringify(secret).slice(1, -1));

/** For plain strings (a span's name and attribute values). */
export const textScrubber = (secrets: readonly string[]) => scrubberOf(secrets, (secret) => secret);
