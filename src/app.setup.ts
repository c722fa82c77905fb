import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LoggerService, LogLevel } from '@nestjs/common';
import { Logger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { AppModule } from './app.module.js';
import type { AppConfig } from './config/app-config.js';
import { createOpenApiDocument } from './openapi/openapi-document.js';
import { serializeResponsesWithDocumentSchemas } from './openapi/response-schemas.js';
import { setupDocs } from './openapi/setup-docs.js';
import { frameworkErrorHandler, handleClientError } from './edge/errors/framework-errors.js';
import { connectionLimits } from './edge/connection-limits.js';
import { singleValueHeaders } from './edge/single-value-headers.js';
import { IDEMPOTENCY_KEY_HEADER } from './pets/idempotency/idempotency-key.decorator.js';
import { jsonBodyParser } from './edge/json-body-parser.js';
import { eventLoopShedding, inFlightShedding } from './edge/load-shedding.js';
import { REQUEST_ID_HEADER, requestId } from './edge/request-id.js';
import { securityHeaders } from './edge/security-headers.js';
import { cors } from './edge/cors.js';
import { RATE_LIMIT_HEADERS } from './auth/rate-limit/rate-limited.error.js';
import { API_PREFIX, BODY_LIMIT_BYTES } from './edge/http.constants.js';
import { closeWhileDraining, ShutdownState } from './edge/shutdown-state.js';
import { OPERATIONS_ROUTES } from './observability/operations-routes.js';
import { withoutControllerHeadings } from './observability/logging/route-lines.js';
import { requestOutcome } from './observability/request-outcome.js';

/** The Fastify server: proxies trusted (TRUST_PROXY, none by default), time limits and the connection cap. */
export function createFastifyAdapter({ trustProxy, edgeLimits, corsOrigins }: AppConfig): FastifyAdapter {
  return new FastifyAdapter({
    // Only these peers' X-Forwarded-For is believed: a client forging it still counts as itself in its budgets.
    ...(trustProxy.length > 0 && { trustProxy }),
    // Node's HTTP server's bounds on a client (docs/operating.md, "Timeouts and connections").
    requestTimeout: edgeLimits.requestTimeoutMs,
    keepAliveTimeout: edgeLimits.keepAliveTimeoutMs,
    http: {
      headersTimeout: edgeLimits.headersTimeoutMs,
      // Node's default, 30 s, would let a slow request run up to 30 s past its limit.
      connectionsCheckingInterval: 500,
      // The edge's header check answers a request without `Host` in the Error shape.
      requireHostHeader: false,
    },
    bodyLimit: BODY_LIMIT_BYTES,
    frameworkErrors: frameworkErrorHandler(corsOrigins),
    clientErrorHandler: handleClientError,
    // While draining at shutdown, requests on open connections are served (`Connection: close`), not Fastify's 503.
    return503OnClosing: false,
  });
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
  // The request pipeline in the order it takes effect (docs/development.md), loaded now so Nest's routes inherit it.
  const exempt = Object.values(OPERATIONS_ROUTES).map((route) => `/${route}`);
  const fastify = app.getHttpAdapter().getInstance();
  await fastify
    .register(connectionLimits, config.edgeLimits)
    .register(inFlightShedding, { maxInFlight: config.loadShedding.maxInFlight, exempt })
    .register(serializeResponsesWithDocumentSchemas, { document, prefix: API_PREFIX })
    .register(requestId)
    .register(securityHeaders, { corsOrigins: config.corsOrigins })
    .register(singleValueHeaders, { names: ['Authorization', IDEMPOTENCY_KEY_HEADER] })
    .register(jsonBodyParser)
    .register(cors, {
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
    })
    .register(eventLoopShedding, { ...config.loadShedding, exempt })
    .register(closeWhileDraining, { shutdown: app.get<ShutdownState>(ShutdownState) })
    .register(requestOutcome, { registry: app.get<Registry>(Registry) });
  setupDocs(app, document);
  await app.init();
  await fastify.ready();
  return app;
}
