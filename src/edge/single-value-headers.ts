import type { IncomingMessage } from 'node:http';
import { type ApiError, validationFailed } from './errors/api-error.js';

const MISSING_HOST = validationFailed('An HTTP/1.1 request must carry a Host header.');

/** Refuses a repeated `Host` or `names`, and HTTP/1.1 without `Host` (docs/contract.md): Node keeps or joins them. */
export function singleValueHeaderCheck(names: readonly string[]): (raw: IncomingMessage) => ApiError | undefined {
  const checked = new Map(
    ['Host', ...names].map((name, index) => {
      const message = `The request carries more than one ${name} header; send it once.`;
      return [name.toLowerCase(), { bit: 1 << index, error: validationFailed(message) }];
    }),
  );
  const lengths = new Set([...checked.keys()].map((name) => name.length));
  const HOST = 1;

  return (raw) => {
    const headers = raw.rawHeaders;
    let seen = 0;
    for (let i = 0; i < headers.length; i += 2) {
      if (!lengths.has(headers[i].length)) continue;
      const entry = checked.get(headers[i].toLowerCase());
      if (entry === undefined) continue;
      if ((seen & entry.bit) !== 0) return entry.error;
      seen |= entry.bit;
    }
    if ((seen & HOST) === 0 && raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1) return MISSING_HOST;
    return undefined;
  };
}
