import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { DOCS_PATH } from '../edge/http.constants.js';
import { noResourceAtPath } from '../edge/errors/api-error.js';
import { RELATIVE_SERVER_URL } from './openapi-document.js';

// The files of swagger-ui-dist the page at /docs loads; the rest of the folder serves no one: 404.
const UI_ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

const NOT_AN_ASSET = noResourceAtPath();

const onlyUiAssets: onRequestHookHandler = (request, _reply, done) => {
  done(UI_ASSETS.has((request.params as { '*'?: string })['*'] ?? '') ? undefined : NOT_AN_ASSET);
};

/** @fastify/static serves its whole root under `/docs/*`; only that route gets the allow-list. */
export const onlyUiAssetsUnderDocs = fp((fastify, _options, done) => {
  fastify.addHook('onRoute', (route) => {
    if (route.url !== `/${DOCS_PATH}/*`) return;
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [onlyUiAssets, ...own];
  });
  done();
});

/** Swagger UI at /docs, the document at /docs-json and /docs-yaml: plain Fastify routes, which the guard skips. */
export function setupDocs(app: NestFastifyApplication, document: OpenAPIObject): void {
  const fastify = app.getHttpAdapter().getInstance();
  // Swagger UI resolves the relative server against the page's address, so /docs/ would send Try it out to
  // /docs/v1. The redirect is relative, so it stays under a proxy's path prefix. Registered first: SwaggerModule
  // skips its own /docs/ route when the path is taken.
  fastify.get(`/${DOCS_PATH}/`, (request, reply) => {
    const query = request.url.indexOf('?');
    return reply.redirect(`../${DOCS_PATH}${query < 0 ? '' : request.url.slice(query)}`, 301);
  });
  // The document as committed in openapi.json: production first, the base URL generated clients default to.
  SwaggerModule.setup(DOCS_PATH, app, document, { useGlobalPrefix: false, ui: false });
  // The UI's copy lists this instance first, which Swagger UI selects: Try it out reaches the one whose docs are open.
  const isServingInstance = (server: { url: string }) => Number(server.url === RELATIVE_SERVER_URL);
  const servers = document.servers?.toSorted((a, b) => isServingInstance(b) - isServingInstance(a));
  SwaggerModule.setup(
    DOCS_PATH,
    app,
    { ...document, servers },
    {
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
    },
  );
}
