import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { onRequestHookHandler } from 'fastify';
import { DOCS_PATH } from '../edge/http.constants.js';
import { ApiError } from '../edge/errors/api-error.js';
import { ErrorCode } from '../edge/errors/error-code.js';

/**
 * The files of swagger-ui-dist the page at /docs loads (its init script is generated, not a file). The rest of
 * the folder (package.json, index.js, source maps...) says which version runs and serves no one: 404.
 */
const UI_ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

const NOT_AN_ASSET = new ApiError(404, ErrorCode.NotFound, 'No resource exists at this path.');

const onlyUiAssets: onRequestHookHandler = (request, _reply, done) => {
  done(UI_ASSETS.has((request.params as { '*'?: string })['*'] ?? '') ? undefined : NOT_AN_ASSET);
};

/**
 * Swagger UI at /docs, the document at /docs-json and /docs-yaml, outside the
 * /v1 prefix. They are plain Fastify routes, so the global API key guard
 * (which protects Nest routes) does not apply: they are public. The UI's
 * assets come from swagger-ui-dist through @fastify/static, never a CDN, and
 * only those the page loads.
 */
export function setupDocs(app: NestFastifyApplication, document: OpenAPIObject): void {
  // @fastify/static serves its whole root under `/docs/*`; that one route gets the allow-list, no other pays for it.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      if (route.url !== `/${DOCS_PATH}/*`) return;
      const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
      route.onRequest = [onlyUiAssets, ...own];
    });
  SwaggerModule.setup(DOCS_PATH, app, document, {
    useGlobalPrefix: false,
    customSiteTitle: 'Animal store API',
    // No validator badge: it would send the document to validator.swagger.io.
    swaggerOptions: { validatorUrl: null, displayOperationId: true },
  });
}
