/**
 * Ids and category ids are int64 in PostgreSQL but JSON numbers on the wire;
 * accepting only up to 2^53-1 keeps every value exact in JavaScript clients.
 */
export const MIN_ID = 1;
export const MAX_ID = Number.MAX_SAFE_INTEGER;

const DECIMAL_ID = /^[1-9][0-9]{0,15}$/;

/** Parses a path or query value that must be a plain decimal id; `undefined` when it is not one. */
export function parseId(value: unknown): number | undefined {
  if (typeof value !== 'string' || !DECIMAL_ID.test(value)) return undefined;
  const id = Number(value);
  return id <= MAX_ID ? id : undefined;
}
