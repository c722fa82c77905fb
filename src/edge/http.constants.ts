export const API_PREFIX = 'v1';
export const API_PATH = `/${API_PREFIX}/`;

export const DOCS_PATH = 'docs';

/** The `WWW-Authenticate` value of every bearer challenge the service sends or documents (RFC 6750 §3). */
export function bearerChallenge({
  realm = 'animal-store',
  error,
  scope,
}: {
  realm?: string;
  error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope';
  scope?: string;
} = {}): string {
  return `Bearer realm="${realm}"${error ? `, error="${error}"` : ''}${scope ? `, scope="${scope}"` : ''}`;
}

export const BODY_LIMIT_BYTES = 16 * 1024;
