import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DOCS_PATH } from '../http/http.constants.js';
import { createOpenApiDocument } from './openapi-document.js';

/**
 * Swagger UI at /docs, the document at /docs-json and /docs-yaml, outside the
 * /v1 prefix. They are plain Fastify routes, so the global API key guard
 * (which protects Nest routes) does not apply: they are public. The UI's
 * assets come from swagger-ui-dist through @fastify/static, never a CDN.
 */
export function setupDocs(app: NestFastifyApplication): void {
  const config = app.get<AppConfig>(APP_CONFIG);
  SwaggerModule.setup(DOCS_PATH, app, () => createOpenApiDocument(app, config), {
    useGlobalPrefix: false,
    customSiteTitle: 'Animal store API',
    // No validator badge: it would send the document to validator.swagger.io.
    swaggerOptions: { validatorUrl: null, displayOperationId: true },
  });
}
