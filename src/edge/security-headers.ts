import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import { API_PREFIX, DOCS_PATH } from './http.constants.js';

/**
 * Swagger UI's pages: helmet's full set, with a policy that keeps the UI
 * working (its scripts and styles are served from this origin, it sets inline
 * styles and shows data: images). No upgrade-insecure-requests: the service
 * is often reached over plain HTTP on a private network.
 */
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

/**
 * JSON responses, which no browser renders as a page: the headers the OWASP
 * REST Security Cheat Sheet lists for APIs (nothing may be loaded or framed,
 * no sniffing, HTTPS from now on), plus no referrer and same-origin resource
 * policy. The ones that only concern HTML pages or retired browser features
 * are left to the docs.
 */
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

/** A response header as a name and its value. */
export type HeaderLine = readonly [name: string, value: string];

/**
 * Every answer depends on the API key or on the instance's state, so no cache between a client and the
 * service may keep one (RFC 9111 §5.2.2.5): a shared cache would otherwise give one caller's animals to another.
 */
export const NO_STORE: HeaderLine = ['cache-control', 'no-store'];

/** The headers a helmet middleware sets, read once from a run against a stand-in response: they never vary. */
function headersSetBy(options: HelmetOptions): HeaderLine[] {
  const headers = new Map<string, string>();
  const response = {
    setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), String(value)),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  };
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error as Error;
  });
  return [...headers, NO_STORE];
}

/** What every API answer carries besides its request id, errors and answers written by hand included. */
export const API_RESPONSE_HEADERS: readonly HeaderLine[] = headersSetBy(API_OPTIONS);
/**
 * The API's answers when CORS_ORIGINS lets pages of other origins call it: a same-origin resource policy would make
 * the browser withhold from them the very answers CORS allows them to read.
 */
const CROSS_ORIGIN_API_RESPONSE_HEADERS: readonly HeaderLine[] = headersSetBy({
  ...API_OPTIONS,
  crossOriginResourcePolicy: { policy: 'cross-origin' },
});
const DOCS_RESPONSE_HEADERS: readonly HeaderLine[] = headersSetBy(DOCS_OPTIONS);
const DOCS_PREFIX = `/${DOCS_PATH}`;
const API_PATH = `/${API_PREFIX}/`;

/** Sets a response's security headers and `Cache-Control: no-store`. */
export type SecurityHeaders = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * Sets the security headers and `Cache-Control: no-store` on the response to the request, errors included: the
 * docs' under `/docs`; under `/v1`, the API's, with a cross-origin resource policy when `crossOriginApi` (CORS_ORIGINS
 * set); the API's elsewhere (the operations routes, unknown paths).
 * helmet's headers are computed once per policy at start-up; run per request (as `@fastify/helmet` does, parsing
 * the policy each time) helmet would weigh on every request (docs/performance.md).
 */
export function securityHeaders({ crossOriginApi }: { crossOriginApi: boolean }): SecurityHeaders {
  const apiHeaders = crossOriginApi ? CROSS_ORIGIN_API_RESPONSE_HEADERS : API_RESPONSE_HEADERS;
  return (request, reply) => {
    const url = request.url;
    const headers = url.startsWith(DOCS_PREFIX)
      ? DOCS_RESPONSE_HEADERS
      : url.startsWith(API_PATH)
        ? apiHeaders
        : API_RESPONSE_HEADERS;
    const raw = reply.raw;
    for (let i = 0; i < headers.length; i++) raw.setHeader(headers[i][0], headers[i][1]);
  };
}
