import { createHash } from 'node:crypto';

/** SHA-256 of the body as canonical JSON (keys sorted), so key order and spacing do not count as a change. */
export function requestFingerprint(body: unknown): string {
  const canonical = JSON.stringify(body, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value,
  );
  return createHash('sha256').update(canonical).digest('hex');
}
