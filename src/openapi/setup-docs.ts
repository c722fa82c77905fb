// Swagger UI's files are served here, not by the @fastify/static that SwaggerModule registers: that one takes no
// compression or cache options, and a compressing plugin would gzip 1.6 MB of script again on every request.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { API_PREFIX, DOCS_PATH } from '../edge/http.constants.js';
import { noResourceAtPath } from '../edge/errors/api-error.js';

// The copy of swagger-ui-dist that SwaggerModule's page is written for: the one @nestjs/swagger depends on.
const require = createRequire(import.meta.url);
const UI_DIST = dirname(createRequire(require.resolve('@nestjs/swagger')).resolve('swagger-ui-dist/package.json'));
// The files the page at /docs loads; the rest of the folder serves no one: 404.
const UI_ASSET = /^(swagger-ui\.css|swagger-ui-(bundle|standalone-preset)\.js|favicon-(32x32|16x16)\.png)$/;
const TYPE = { css: 'text/css; charset=utf-8', js: 'application/javascript; charset=utf-8', png: 'image/png' };
/** The page's URLs carry no version, so no `immutable`: after a day a browser asks again, and gets a 304 if unchanged. */
export const DOCS_ASSET_MAX_AGE_SECONDS = 86_400;

/** Each read and gzipped once, when first asked for: serving one costs no CPU, and 1.6 MB of script goes as 0.43. */
async function load(name: string) {
  const identity = await readFile(join(UI_DIST, name));
  const etag = createHash('sha256').update(identity).digest('base64url').slice(0, 22);
  return { etag, identity, gzip: await promisify(gzip)(identity, { level: 9 }) };
}
const assets = new Map<string, ReturnType<typeof load>>();

const acceptsGzip = (request: FastifyRequest) =>
  (request.headers['accept-encoding'] ?? '').split(',').some((entry) => {
    const [coding, q = 'q=1'] = entry.split(';').map((part) => part.trim());
    return coding === 'gzip' && Number(q.replace(/^q=/, '')) > 0;
  });

const NOT_AN_ASSET = noResourceAtPath();
const notAnAsset: onRequestHookHandler = (_request, _reply, done) => done(NOT_AN_ASSET);

/** Swagger UI at /docs, the document at /docs-json and /docs-yaml: plain Fastify routes, which the guard skips. */
export function setupDocs(app: NestFastifyApplication, document: OpenAPIObject): void {
  const fastify = app.getHttpAdapter().getInstance();
  // From /docs/, Try it out would reach /docs/v1; relative, so it stays under a proxy's path prefix; registered
  // first, as SwaggerModule skips its own /docs/ route when the path is taken.
  fastify.get(`/${DOCS_PATH}/`, (request, reply) =>
    reply.redirect(`../${DOCS_PATH}${request.url.replace(/^[^?]*/, '')}`, 301),
  );
  // Gzipped when the browser takes it, cacheable, with an ETag; ahead of `/docs/*` (a parameter wins over a wildcard).
  fastify.get<{ Params: { asset: string } }>(`/${DOCS_PATH}/:asset`, async (request, reply) => {
    const name = request.params.asset;
    if (!UI_ASSET.test(name)) throw NOT_AN_ASSET;
    const asset = await (assets.get(name) ?? assets.set(name, load(name)).get(name)!);
    const gzipped = acceptsGzip(request);
    const etag = `"${asset.etag}${gzipped ? '-gzip' : ''}"`;
    void reply
      .type(TYPE[name.slice(name.lastIndexOf('.') + 1) as keyof typeof TYPE])
      .header('cache-control', `public, max-age=${DOCS_ASSET_MAX_AGE_SECONDS}`)
      .header('etag', etag)
      .header('vary', [reply.getHeader('vary'), 'Accept-Encoding'].filter(Boolean).join(', '));
    if (request.headers['if-none-match']?.split(/\s*,\s*/).includes(etag)) return reply.code(304).send();
    if (gzipped) void reply.header('content-encoding', 'gzip');
    return reply.send(gzipped ? asset.gzip : asset.identity);
  });
  // @fastify/static, which SwaggerModule registers, serves its whole root under `/docs/*`: that route only refuses.
  fastify.addHook('onRoute', (route) => {
    if (route.url === `/${DOCS_PATH}/*`) route.onRequest = [notAnAsset, ...[route.onRequest ?? []].flat()];
  });
  // The document as committed in openapi.json: production first, the base URL generated clients default to.
  SwaggerModule.setup(DOCS_PATH, app, document, { useGlobalPrefix: false, ui: false });
  // The UI's copy lists this instance first, which Swagger UI selects: Try it out reaches the one whose docs are open.
  const servers = document.servers?.toSorted((a, b) => Number(b.url === API_PREFIX) - Number(a.url === API_PREFIX));
  const uiDocument = { ...document, servers };
  SwaggerModule.setup(DOCS_PATH, app, uiDocument, {
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
