import fp from 'fastify-plugin';
import { validationFailed } from './errors/api-error.js';
import { sendApiError } from './errors/framework-errors.js';

const MISSING_HOST = validationFailed('An HTTP/1.1 request must carry a Host header.');

/** Refuses a repeated `Host` or `names`, and HTTP/1.1 without `Host` (docs/contract.md): Node keeps or joins them. */
export const singleValueHeaders = fp<{ names: readonly string[] }>(
  (fastify, { names }, done) => {
    const checked = new Map(
      ['Host', ...names].map((name, index) => {
        const message = `The request carries more than one ${name} header; send it once.`;
        return [name.toLowerCase(), { bit: 1 << index, error: validationFailed(message) }];
      }),
    );
    const lengths = new Set([...checked.keys()].map((name) => name.length));
    const HOST = 1;
    fastify.addHook('onRequest', (request, reply, next) => {
      const headers = request.raw.rawHeaders;
      let seen = 0;
      for (let i = 0; i < headers.length; i += 2) {
        if (!lengths.has(headers[i].length)) continue;
        const entry = checked.get(headers[i].toLowerCase());
        if (entry === undefined) continue;
        if ((seen & entry.bit) !== 0) return sendApiError(reply, entry.error);
        seen |= entry.bit;
      }
      if ((seen & HOST) === 0 && request.raw.httpVersion === '1.1') return sendApiError(reply, MISSING_HOST);
      next();
    });
    done();
  },
  { name: 'single-value-headers', dependencies: ['security-headers'] },
);
