import fp from 'fastify-plugin';
import { PinoLogger } from 'nestjs-pino';
import type { AuthenticatedRequest } from '../../auth/api-key-identity.js';

/** One log line per request, written when the response is done: what was called, by whom, how it ended. */
export const requestLog = fp(
  (fastify, _options, ready) => {
    // Not pino-http's autoLogging, and on nestjs-pino's root logger: docs/operating.md, "Logs", and development.md.
    const logger = PinoLogger.root.child({ context: 'Request' });
    fastify.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      logger[status >= 500 ? 'warn' : 'info'](
        {
          reqId: request.id,
          method: request.method,
          route: request.routeOptions.url ?? null,
          status,
          durationMs: Math.round(reply.elapsedTime * 100) / 100,
          keyId: (request as AuthenticatedRequest).user?.id ?? null,
        },
        'request completed',
      );
      done();
    });
    ready();
  },
  { name: 'request-log' },
);
