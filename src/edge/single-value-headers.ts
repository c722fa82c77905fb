import type { IncomingMessage } from 'node:http';
import { ApiError } from './errors/api-error.js';
import { ErrorCode } from './errors/error-code.js';

const MISSING_HOST = new ApiError(400, ErrorCode.ValidationFailed, 'An HTTP/1.1 request must carry a Host header.');

/**
 * Refuses a request that repeats a header meant to appear once. Node keeps only the first `Host` and
 * `Authorization` and joins repeated other headers with ", " (two `Idempotency-Key` headers became the key
 * "a, b"), so the service would silently act on a value the client did not send as such. RFC 9112 §3.2 requires
 * a 400 for more than one `Host` (and for none in HTTP/1.1, which Node is told not to answer itself).
 *
 * Returns the check: the request's own error, built once per header, or undefined. It reads the raw header
 * list and lowercases only names as long as one of `names`, so a request costs a loop over its headers.
 */
export function singleValueHeaderCheck(names: readonly string[]): (raw: IncomingMessage) => ApiError | undefined {
  const all = ['host', ...names.map((name) => name.toLowerCase())];
  const repeated = new Map(
    all.map((name, index) => [
      name,
      {
        bit: 1 << index,
        error: new ApiError(
          400,
          ErrorCode.ValidationFailed,
          `The request carries more than one ${canonical(name, names)} header; send it once.`,
        ),
      },
    ]),
  );
  const lengths = new Set(all.map((name) => name.length));
  const HOST = 1;

  return (raw) => {
    const headers = raw.rawHeaders;
    let seen = 0;
    for (let i = 0; i < headers.length; i += 2) {
      if (!lengths.has(headers[i].length)) continue;
      const entry = repeated.get(headers[i].toLowerCase());
      if (entry === undefined) continue;
      if ((seen & entry.bit) !== 0) return entry.error;
      seen |= entry.bit;
    }
    if ((seen & HOST) === 0 && raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1) return MISSING_HOST;
    return undefined;
  };
}

const canonical = (lower: string, names: readonly string[]) =>
  lower === 'host' ? 'Host' : (names.find((name) => name.toLowerCase() === lower) ?? lower);
