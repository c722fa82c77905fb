import { Problem } from '../config/problem.js';

/** What a key may be limited to: each operation names the one it needs with `@RequiresScope`. */
export const API_KEY_SCOPES = ['pets:read', 'pets:write'] as const;

export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Set by `@RequiresScope` (src/openapi/), read by the guard. */
export const REQUIRED_SCOPE = 'auth:required-scope';

/** Comma-separated scopes as known scopes without repeats, or the one-line Problem. */
export function parseScopes(text: string): readonly ApiKeyScope[] | Problem {
  const allowed = `use ${API_KEY_SCOPES.join(', ')} or both, comma-separated (e.g. --scopes ${API_KEY_SCOPES[0]})`;
  const parts = text.split(',').map((part) => part.trim());
  const unknown = parts.filter((part) => !(API_KEY_SCOPES as readonly string[]).includes(part));
  if (unknown.length === 0) return [...new Set(parts as ApiKeyScope[])];
  const named = unknown.filter((part) => part !== '').map((part) => `"${part}"`);
  const problem = named.length > 0 ? `Unknown scope ${named.join(', ')}` : '--scopes needs at least one scope';
  return new Problem(`${problem}: ${allowed}.`);
}
