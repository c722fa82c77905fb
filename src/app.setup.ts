import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LoggerService, LogLevel } from '@nestjs/common';
import { Logger } from 'nestjs-pino';
import { AppModule, ResolvedConfig } from './app.module.js';
import type { AppConfig } from './config/app-config.js';
import { createOpenApiDocument } from './openapi/openapi-document.js';
import { serializeResponsesWithDocumentSchemas } from './openapi/response-schemas.js';
import { setupDocs } from './openapi/setup-docs.js';
import { frameworkErrorHandler, handleClientError, sendApiError } from './edge/errors/framework-errors.js';
import { applyConnectionLimits, serverOptions } from './edge/connection-limits.js';
import { singleValueHeaderCheck } from './edge/single-value-headers.js';
import { IDEMPOTENCY_KEY_HEADER } from './pets/idempotency/idempotency-key.decorator.js';
import { registerJsonBodyParser } from './edge/json-body-parser.js';
import { registerLoadShedding } from './edge/load-shedding.js';
import { assignRequestId, REQUEST_ID_HEADER } from './edge/request-id.js';
import { securityHeaders } from './edge/security-headers.js';
import { registerCors } from './edge/cors.js';
import { RATE_LIMIT_HEADERS } from './auth/rate-limit/rate-limited.error.js';
import { API_PREFIX, BODY_LIMIT_BYTES } from './edge/http.constants.js';
import { closeConnectionsWhileDraining, ShutdownState } from './edge/shutdown-state.js';
import { OPERATIONS_ROUTES } from './observability/operations-routes.js';
import { withoutControllerHeadings } from './observability/logging/route-lines.js';

/** The Fastify server: proxies trusted (TRUST_PROXY, none by default), time limits and the connection cap. */
export function createFastifyAdapter({ trustProxy, edgeLimits, corsOrigins }: AppConfig): FastifyAdapter {
  const setSecurityHeaders = securityHeaders({ crossOriginApi: corsOrigins.length > 0 });
  const adapter = new FastifyAdapter({
    // Only these peers' X-Forwarded-For is believed: a client forging it still counts as itself in its budgets.
    ...(trustProxy.length > 0 && { trustProxy }),
    ...serverOptions(edgeLimits),
    bodyLimit: BODY_LIMIT_BYTES,
    frameworkErrors: frameworkErrorHandler(setSecurityHeaders),
    clientErrorHandler: handleClientError,
    genReqId: assignRequestId,
    // While draining at shutdown, requests on open connections are served (`Connection: close`), not Fastify's 503.
    return503OnClosing: false,
  });
  const fastify = adapter.getInstance();
  applyConnectionLimits(fastify, edgeLimits);
  const checkSingleValueHeaders = singleValueHeaderCheck(['Authorization', IDEMPOTENCY_KEY_HEADER]);
  // From here on every response, errors included, carries its request id, the security headers and no-store.
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    setSecurityHeaders(request, reply);
    const refused = checkSingleValueHeaders(request.raw);
    if (refused !== undefined) return sendApiError(reply, refused);
    done();
  });
  return adapter;
}

/** Then what cannot be a provider: prefix, body parsing, CORS, load shedding, draining, docs, response serializers. */
export async function createApp(
  config: ResolvedConfig,
  logger?: LoggerService | LogLevel[] | false,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createFastifyAdapter(config),
    {
      logger,
      bufferLogs: logger === undefined,
      abortOnError: false,
      // Nest's parsers would add application/x-www-form-urlencoded: Fastify's JSON parser is the only one.
      bodyParser: false,
    },
  );
  if (logger === undefined) app.useLogger(withoutControllerHeadings(app.get(Logger)));
  const operationsRoutes = Object.values(OPERATIONS_ROUTES);
  app.setGlobalPrefix(API_PREFIX, { exclude: operationsRoutes });
  const fastify = app.getHttpAdapter().getInstance();
  // Only JSON bodies are accepted; Fastify's default text/plain parser would let other bodies through to validation.
  fastify.removeContentTypeParser('text/plain');
  registerJsonBodyParser(fastify);
  // Before load shedding: its refusals carry the CORS headers, and preflights are answered before it can shed them.
  registerCors(fastify, {
    origins: config.corsOrigins,
    requestHeaders: ['Authorization', 'Content-Type', IDEMPOTENCY_KEY_HEADER],
    // What a page on another origin reads: paging, budgets, deprecation, refusals, tracing.
    exposedHeaders: [
      'Link',
      ...Object.values(RATE_LIMIT_HEADERS),
      'Retry-After',
      'Deprecation',
      'Sunset',
      REQUEST_ID_HEADER,
      'WWW-Authenticate',
      'Location',
    ],
  });
  const operationsPaths = operationsRoutes.map((route) => `/${route}`);
  registerLoadShedding(fastify, config.loadShedding, operationsPaths);
  closeConnectionsWhileDraining(fastify, app.get(ShutdownState));
  // Built before the routes are registered (app.init), so that their response schemas come from it.
  const document = createOpenApiDocument(app, config);
  serializeResponsesWithDocumentSchemas(fastify, document, API_PREFIX);
  setupDocs(app, document);
  await app.init();
  await fastify.ready();
  return app;
}
