// Hand-written: Fastify's genReqId hook needs the function; no library validates a client-chosen X-Request-Id.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';

export const REQUEST_ID_HEADER = 'X-Request-Id';

// What a client may choose as its own id: short, and nothing that could break a log line or a header.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/;

/** The client's sane `X-Request-Id` or a UUID, left on the raw request for pino-http too. */
export function assignRequestId(raw: IncomingMessage): string {
  const offered = raw.headers['x-request-id'];
  const id = typeof offered === 'string' && SANE_REQUEST_ID.test(offered) ? offered : randomUUID();
  raw.id = id;
  return id;
}

/** Each request's id, which every answer from here on carries, errors included (Fastify's own too). */
export const requestId = fp(
  (fastify, _options, done) => {
    fastify.setGenReqId(assignRequestId);
    fastify.addHook('onRequest', (request, reply, next) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      next();
    });
    done();
  },
  { name: 'request-id' },
);
