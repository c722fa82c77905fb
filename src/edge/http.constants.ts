/** The versioned API's path prefix: every product route lives under `/v1`. */
export const API_PREFIX = 'v1';

/** Where Swagger UI and the OpenAPI document are served, outside the versioned API. */
export const DOCS_PATH = 'docs';

/** The realm of the API's bearer challenges (`WWW-Authenticate: Bearer realm="animal-store"`, RFC 6750). */
export const REALM = 'animal-store';

/** The RFC 6750 error of a bearer challenge: a malformed request, a refused key, or a key without the needed scope. */
export type BearerError = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/**
 * The `WWW-Authenticate` value of a bearer challenge (RFC 6750 §3): the realm, then the error and the scope an
 * operation needs when there are. Every challenge the service sends, and the ones its OpenAPI document lists.
 */
export function bearerChallenge({
  realm = REALM,
  error,
  scope,
}: { realm?: string; error?: BearerError; scope?: string } = {}): string {
  return `Bearer realm="${realm}"${error ? `, error="${error}"` : ''}${scope ? `, scope="${scope}"` : ''}`;
}

/** The largest request body accepted; larger ones get a 413 `payload_too_large`. */
export const BODY_LIMIT_BYTES = 16 * 1024;
