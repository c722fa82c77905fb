import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import { DOCS_PATH } from '../edge/http.constants.js';

/**
 * Swagger UI at /docs, the document at /docs-json and /docs-yaml, outside the
 * /v1 prefix. They are plain Fastify routes, so the global API key guard
 * (which protects Nest routes) does not apply: they are public. The UI's
 * assets come from swagger-ui-dist through @fastify/static, never a CDN.
 */
export function setupDocs(app: NestFastifyApplication, document: OpenAPIObject): void {
  SwaggerModule.setup(DOCS_PATH, app, document, {
    useGlobalPrefix: false,
    customSiteTitle: 'Animal store API',
    // No validator badge: it would send the document to validator.swagger.io.
    swaggerOptions: { validatorUrl: null, displayOperationId: true },
  });
}
