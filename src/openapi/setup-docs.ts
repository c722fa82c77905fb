import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { onRequestHookHandler } from 'fastify';
import { DOCS_PATH } from '../edge/http.constants.js';
import { ApiError } from '../edge/errors/api-error.js';
import { ErrorCode } from '../edge/errors/error-code.js';
import { THIS_SERVER } from './openapi-document.js';

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
  // Swagger UI resolves the relative server against the page's address, and /docs/ would send Try it out to
  // /docs/v1: the page has one address. The redirect is relative, so it stays under a proxy's path prefix.
  // Registered first: SwaggerModule skips its own /docs/ route when the path is taken.
  app
    .getHttpAdapter()
    .getInstance()
    .get(`/${DOCS_PATH}/`, (request, reply) => {
      const query = request.url.indexOf('?');
      return reply.redirect(`../${DOCS_PATH}${query < 0 ? '' : request.url.slice(query)}`, 301);
    });
  // The document as committed in openapi.json: production first, the base URL generated clients default to.
  SwaggerModule.setup(DOCS_PATH, app, document, { useGlobalPrefix: false, ui: false });
  SwaggerModule.setup(DOCS_PATH, app, forTryingOut(document), {
    useGlobalPrefix: false,
    raw: false,
    customSiteTitle: 'Animal store API',
    swaggerOptions: {
      // No validator badge: it would send the document to validator.swagger.io.
      validatorUrl: null,
      displayOperationId: true,
      // The key stays in the browser's local storage for this origin, across reloads, until Logout.
      persistAuthorization: true,
    },
  });
}

/**
 * The UI's copy lists the instance serving it first, which Swagger UI selects by default: Try it out reaches the
 * instance whose docs are open (local, staging or production), and production and staging stay a pick away.
 */
function forTryingOut(document: OpenAPIObject): OpenAPIObject {
  const servers = document.servers ?? [];
  return {
    ...document,
    servers: [
      ...servers.filter((server) => server.url === THIS_SERVER),
      ...servers.filter((s) => s.url !== THIS_SERVER),
    ],
  };
}
