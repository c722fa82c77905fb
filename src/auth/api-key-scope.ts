/** What a key may be limited to: `pets:read` covers listPets and getPet, `pets:write` covers createPet. */
export const API_KEY_SCOPES = ['pets:read', 'pets:write'] as const;

export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Metadata key of the scope an operation needs (set by `@RequiresScope`, in src/openapi/; read by the guard). */
export const REQUIRED_SCOPE = 'auth:required-scope';

export const isApiKeyScope = (value: string): value is ApiKeyScope =>
  (API_KEY_SCOPES as readonly string[]).includes(value);

/**
 * `pets:read,pets:write` as a list of known scopes without repeats, or the one-line problem with what is allowed.
 */
export function parseScopes(text: string): readonly ApiKeyScope[] | { problem: string } {
  const allowed = `use ${API_KEY_SCOPES.join(', ')} or both, comma-separated (e.g. --scopes pets:read)`;
  const parts = text.split(',').map((part) => part.trim());
  const unknown = parts.filter((part) => !isApiKeyScope(part));
  if (parts.length === 0 || unknown.length > 0) {
    const what = unknown.filter((part) => part !== '');
    return {
      problem:
        what.length > 0
          ? `Unknown scope ${what.map((part) => `"${part}"`).join(', ')}: ${allowed}.`
          : `--scopes needs at least one scope: ${allowed}.`,
    };
  }
  return [...new Set(parts as ApiKeyScope[])];
}
