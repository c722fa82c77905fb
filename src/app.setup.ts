import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LoggerService, LogLevel } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import fp from 'fastify-plugin';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import type { AppConfig } from './config/app-config.js';
import { createOpenApiDocument } from './openapi/openapi-document.js';
import { serializeResponsesWithDocumentSchemas } from './openapi/response-schemas.js';
import { onlyUiAssetsUnderDocs, setupDocs } from './openapi/setup-docs.js';
import { frameworkErrorHandler, handleClientError, sendApiError } from './edge/errors/framework-errors.js';
import { connectionLimits, serverOptions } from './edge/connection-limits.js';
import { singleValueHeaderCheck } from './edge/single-value-headers.js';
import { IDEMPOTENCY_KEY_HEADER } from './pets/idempotency/idempotency-key.decorator.js';
import { jsonBodyParser } from './edge/json-body-parser.js';
import { loadShedding } from './edge/load-shedding.js';
import { assignRequestId, REQUEST_ID_HEADER } from './edge/request-id.js';
import { securityHeaders } from './edge/security-headers.js';
import { cors } from './edge/cors.js';
import { RATE_LIMIT_HEADERS } from './auth/rate-limit/rate-limited.error.js';
import { API_PREFIX, BODY_LIMIT_BYTES } from './edge/http.constants.js';
import { closeConnectionsWhileDraining, ShutdownState } from './edge/shutdown-state.js';
import { OPERATIONS_ROUTES } from './observability/operations-routes.js';
import { withoutControllerHeadings } from './observability/logging/route-lines.js';
import { requestLog } from './observability/logging/request-log.js';
import { MetricsService } from './observability/metrics/metrics.service.js';

/** The Fastify server: proxies trusted (TRUST_PROXY, none by default), time limits and the connection cap. */
export function createFastifyAdapter({ trustProxy, edgeLimits, corsOrigins }: AppConfig): FastifyAdapter {
  return new FastifyAdapter({
    // Only these peers' X-Forwarded-For is believed: a client forging it still counts as itself in its budgets.
    ...(trustProxy.length > 0 && { trustProxy }),
    ...serverOptions(edgeLimits),
    bodyLimit: BODY_LIMIT_BYTES,
    frameworkErrors: frameworkErrorHandler(securityHeaders({ crossOriginApi: corsOrigins.length > 0 })),
    clientErrorHandler: handleClientError,
    genReqId: assignRequestId,
    // While draining at shutdown, requests on open connections are served (`Connection: close`), not Fastify's 503.
    return503OnClosing: false,
  });
}

/** From here on every response, errors included, carries its request id, the security headers and no-store. */
const edgeHeaders = ({ corsOrigins }: AppConfig) =>
  fp((fastify, _options, ready) => {
    const setSecurityHeaders = securityHeaders({ crossOriginApi: corsOrigins.length > 0 });
    const checkSingleValueHeaders = singleValueHeaderCheck(['Authorization', IDEMPOTENCY_KEY_HEADER]);
    fastify.addHook('onRequest', (request, reply, done) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      setSecurityHeaders(request, reply);
      const refused = checkSingleValueHeaders(request.raw);
      if (refused !== undefined) return sendApiError(reply, refused);
      done();
    });
    ready();
  });

/**
 * The request pipeline (test/request-pipeline.e2e-spec.ts pins it). First the route rewriters, which must see every
 * route, CORS's own included; then the `onRequest` hooks, in the order they run; then, per route, body parsing, the
 * in-flight count (`preHandler`), Nest's guards, pipes, interceptors and filter; the `onResponse` hooks see every
 * answer. Outside the list: the adapter's options (limits, request ids, Fastify's own errors).
 */
function requestPipeline(app: NestFastifyApplication, config: AppConfig, document: OpenAPIObject) {
  const shedding = loadShedding(
    config.loadShedding,
    Object.values(OPERATIONS_ROUTES).map((route) => `/${route}`),
  );
  return [
    connectionLimits(config.edgeLimits),
    shedding.perRoute,
    serializeResponsesWithDocumentSchemas(document, API_PREFIX),
    onlyUiAssetsUnderDocs,
    edgeHeaders(config),
    jsonBodyParser,
    // Before load shedding: its refusals carry the CORS headers, and preflights are answered before it can shed them.
    cors({
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
    }),
    shedding.onEventLoop,
    closeConnectionsWhileDraining(app.get(ShutdownState)),
    app.get(MetricsService).requestMetrics,
    requestLog,
  ];
}

/** Then what cannot be a provider: prefix, the request pipeline, docs. */
export async function createApp(
  config: AppConfig,
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
  app.setGlobalPrefix(API_PREFIX, { exclude: Object.values(OPERATIONS_ROUTES) });
  // Built before the routes are registered (app.init), so that their response schemas come from it.
  const document = createOpenApiDocument(app, config);
  const fastify = app.getHttpAdapter().getInstance();
  // Loaded now, in order: Nest's routes, added at init, inherit what the plugins hang on the instance.
  for (const plugin of requestPipeline(app, config, document)) await fastify.register(plugin);
  setupDocs(app, document);
  await app.init();
  await fastify.ready();
  return app;
}
