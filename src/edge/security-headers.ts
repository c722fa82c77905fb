// helmet's headers, read once per policy at start-up: run per request, helmet weighs on every request (docs/performance.md).
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import helmet, { type HelmetOptions } from 'helmet';
import { API_PATH, DOCS_PATH } from './http.constants.js';

// Swagger UI's pages: its own scripts and styles, inline styles, data: images; no upgrade-insecure-requests (plain HTTP
// on a private network is common).
const DOCS_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      baseUri: ["'self'"],
      connectSrc: ["'self'"],
      fontSrc: ["'self'", 'data:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      imgSrc: ["'self'", 'data:'],
      objectSrc: ["'none'"],
      scriptSrc: ["'self'"],
      scriptSrcAttr: ["'none'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
    },
  },
};

// JSON answers: the OWASP REST Security Cheat Sheet's headers for APIs, no referrer, a same-origin resource policy.
const API_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xFrameOptions: { action: 'deny' },
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

type HeaderLine = readonly [name: string, value: string];

/** Answers depend on the API key or the instance's state: no shared cache may keep one (RFC 9111 §5.2.2.5). */
export const NO_STORE: HeaderLine = ['cache-control', 'no-store'];

function headersSetBy(options: HelmetOptions): HeaderLine[] {
  const response = new ServerResponse(new IncomingMessage(new Socket()));
  helmet(options)(response.req, response, () => undefined);
  const set = Object.entries(response.getHeaders()).map(([name, value]): HeaderLine => [name, String(value)]);
  return [...set, NO_STORE];
}

/** What every API answer carries besides its request id, errors and answers written by hand included. */
export const API_RESPONSE_HEADERS: readonly HeaderLine[] = headersSetBy(API_OPTIONS);
// With CORS_ORIGINS set, a same-origin resource policy would withhold from other origins the answers CORS lets them read.
const CROSS_ORIGIN_API_RESPONSE_HEADERS = headersSetBy({
  ...API_OPTIONS,
  crossOriginResourcePolicy: { policy: 'cross-origin' },
});
const DOCS_RESPONSE_HEADERS = headersSetBy(DOCS_OPTIONS);

// The docs' headers under `/docs`, the API's elsewhere (cross-origin under `/v1` when CORS_ORIGINS is set, and then
// every answer varies by Origin, as `@fastify/cors` says, also those refused before its hook runs).
export function securityHeadersFor(corsOrigins: readonly string[]) {
  const crossOriginApi = corsOrigins.length > 0;
  const apiHeaders = crossOriginApi ? CROSS_ORIGIN_API_RESPONSE_HEADERS : API_RESPONSE_HEADERS;
  const docsPrefix = `/${DOCS_PATH}`;
  return (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.url;
    const headers = url.startsWith(docsPrefix)
      ? DOCS_RESPONSE_HEADERS
      : url.startsWith(API_PATH)
        ? apiHeaders
        : API_RESPONSE_HEADERS;
    for (let i = 0; i < headers.length; i++) reply.raw.setHeader(headers[i][0], headers[i][1]);
    if (crossOriginApi) reply.raw.setHeader('vary', 'Origin');
  };
}

/** From here on every answer, errors included, carries them and no-store. */
export const securityHeaders = fp<{ corsOrigins: readonly string[] }>(
  (fastify, { corsOrigins }, done) => {
    const setSecurityHeaders = securityHeadersFor(corsOrigins);
    fastify.addHook('onRequest', (request, reply, next) => {
      setSecurityHeaders(request, reply);
      next();
    });
    done();
  },
  { name: 'security-headers' },
);
