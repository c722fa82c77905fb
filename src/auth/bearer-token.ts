const BEARER = /^Bearer (\S+)$/i;

/** The token of `Authorization: Bearer <token>` (RFC 6750 §2.1), or null when the header is absent or malformed. */
export function bearerToken(header: string | undefined): string | null {
  return header === undefined ? null : (BEARER.exec(header)?.[1] ?? null);
}
