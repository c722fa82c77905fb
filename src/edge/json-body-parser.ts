// Hand-written: Fastify's JSON parser decodes any charset and invalid UTF-8 as U+FFFD; this wraps it with those two checks.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors/api-error.js';
import { ErrorCode } from './errors/error-code.js';

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * Fastify's JSON parser with two checks in front. JSON is UTF-8 (RFC 8259 §8.1):
 * a body declared in another charset is refused (415) rather than read as
 * UTF-8, and bytes that are not valid UTF-8 are refused (400) rather than
 * decoded to U+FFFD and stored as a name the client never sent.
 */
export function registerJsonBodyParser(fastify: FastifyInstance): void {
  const { onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig;
  const parseJson = fastify.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      done(new ApiError(415, ErrorCode.UnsupportedMediaType, 'The request body must be application/json in UTF-8.'));
      return;
    }
    if (!isUtf8(body)) {
      done(new ApiError(400, ErrorCode.InvalidJson, 'The request body is not valid UTF-8.'));
      return;
    }
    // Fastify's default parser answers through `done`; its type also allows a promise, which it never returns.
    void parseJson(request, body.toString('utf8'), done);
  });
}
