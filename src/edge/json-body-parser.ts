import { isUtf8 } from 'node:buffer';
import fp from 'fastify-plugin';
import { ApiError } from './errors/api-error.js';
import { ErrorCode } from './errors/error-code.js';

/** The deepest nesting of arrays and objects a body may have; the contract's bodies are flat (depth 1). */
export const MAX_BODY_DEPTH = 32;

const COMPRESSED = new ApiError(
  415,
  ErrorCode.UnsupportedMediaType,
  'The request body must not be compressed: send it without Content-Encoding (or with identity).',
  // RFC 9110 §15.5.16: a 415 for a content coding says which codings are accepted.
  { 'Accept-Encoding': 'identity' },
);
const TOO_DEEP = new ApiError(
  400,
  ErrorCode.InvalidJson,
  `The request body is nested deeper than ${MAX_BODY_DEPTH} levels of arrays and objects.`,
);

/** Counted on the bytes, before parsing: a few thousand levels overflowed the stack. Unbalanced text is the parser's. */
function nestedDeeperThan(body: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    // In a string a backslash escapes the next byte; outside one, brackets and braces nest.
    if (inString) {
      if (byte === 0x5c) i++;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if ((byte === 0x7b || byte === 0x5b) && ++depth > limit) return true;
    else if (byte === 0x7d || byte === 0x5d) depth--;
  }
  return false;
}

/** Fastify's JSON parser (any charset, bad UTF-8, any depth) behind those refusals; the only parser (no text/plain). */
export const jsonBodyParser = fp(
  (fastify, _options, done) => {
    fastify.removeContentTypeParser('text/plain');
    const { onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig;
    const parseJson = fastify.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
    fastify.removeContentTypeParser('application/json');
    fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
      const encoding = request.headers['content-encoding'];
      if (encoding !== undefined && !/^\s*identity\s*$/i.test(encoding)) return done(COMPRESSED);
      const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers['content-type'] ?? '')?.[1];
      if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
        return done(
          new ApiError(415, ErrorCode.UnsupportedMediaType, 'The request body must be application/json in UTF-8.'),
        );
      }
      if (!isUtf8(body)) return done(new ApiError(400, ErrorCode.InvalidJson, 'The request body is not valid UTF-8.'));
      if (nestedDeeperThan(body, MAX_BODY_DEPTH)) return done(TOO_DEEP);
      // Fastify's default parser answers through `done`; its type also allows a promise, which it never returns.
      void parseJson(request, body.toString('utf8'), done);
    });
    done();
  },
  { name: 'json-body-parser' },
);
