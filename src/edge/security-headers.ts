// helmet's headers, read once per policy at start-up: run per request, helmet weighs on every request (docs/performance.md).
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import helmet, { type HelmetOptions } from 'helmet';
import { API_PATH, DOCS_PATH } from './http.constants.js';

type HeaderLine = readonly [name: string, value: string];

/** Answers depend on the API key or the instance's state: no shared cache may keep one (RFC 9111 §5.2.2.5). */
export const NO_STORE: HeaderLine = ['cache-control', 'no-store'];

/** The policy as sent, helmet's other headers for `options`, and no-store. */
function headersSetBy(contentSecurityPolicy: string, options: HelmetOptions = {}): HeaderLine[] {
  const response = new ServerResponse(new IncomingMessage(new Socket()));
  helmet({ ...options, contentSecurityPolicy: false })(response.req, response, () => undefined);
  const set = Object.entries(response.getHeaders()).map(([name, value]): HeaderLine => [name, String(value)]);
  return [['content-security-policy', contentSecurityPolicy], ...set, NO_STORE];
}

// Swagger UI's pages: its own scripts and styles, inline styles, data: images; no upgrade-insecure-requests (plain HTTP
// on a private network is common).
const DOCS_RESPONSE_HEADERS = headersSetBy(
  "default-src 'self';base-uri 'self';connect-src 'self';font-src 'self' data:;form-action 'self';" +
    "frame-ancestors 'none';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';" +
    "style-src 'self' 'unsafe-inline'",
);

// JSON answers: the OWASP REST Security Cheat Sheet's headers for APIs, no referrer, a same-origin resource policy.
const API_CSP = "default-src 'none';frame-ancestors 'none'";
const API_OPTIONS: HelmetOptions = {
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xFrameOptions: { action: 'deny' },
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

/** What every API answer carries besides its request id, errors and answers written by hand included. */
export const API_RESPONSE_HEADERS: readonly HeaderLine[] = headersSetBy(API_CSP, API_OPTIONS);
// With CORS_ORIGINS set, a same-origin resource policy would withhold from other origins the answers CORS lets them read.
const CROSS_ORIGIN_API_HEADERS = headersSetBy(API_CSP, {
  ...API_OPTIONS,
  crossOriginResourcePolicy: { policy: 'cross-origin' },
});

// The docs' headers under `/docs`, the API's elsewhere (cross-origin under `/v1` when CORS_ORIGINS is set, and then
// every answer varies by Origin, as `@fastify/cors` says, also those refused before its hook runs). An onRequest hook.
export function securityHeadersFor(corsOrigins: readonly string[]) {
  const crossOriginApi = corsOrigins.length > 0;
  const apiHeaders = crossOriginApi ? CROSS_ORIGIN_API_HEADERS : API_RESPONSE_HEADERS;
  const docsPrefix = `/${DOCS_PATH}`;
  return (request: FastifyRequest, reply: FastifyReply, next: () => void) => {
    const url = request.url;
    const headers = url.startsWith(docsPrefix)
      ? DOCS_RESPONSE_HEADERS
      : url.startsWith(API_PATH)
        ? apiHeaders
        : API_RESPONSE_HEADERS;
    for (let i = 0; i < headers.length; i++) reply.raw.setHeader(headers[i][0], headers[i][1]);
    if (crossOriginApi) reply.raw.setHeader('vary', 'Origin');
    next();
  };
}

/** From here on every answer, errors included, carries them and no-store. */
export const securityHeaders = fp<{ corsOrigins: readonly string[] }>(
  (fastify, { corsOrigins }, done) => {
    fastify.addHook('onRequest', securityHeadersFor(corsOrigins));
    done();
  },
  { name: 'security-headers' },
);
