import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import { DOCS_PATH } from './http.constants.js';

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

/** The headers helmet's middleware sets for `options`, recorded from one run of it. */
function helmetHeaders(options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number) {
      headers[name] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name];
    },
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return Object.freeze(headers);
}

// Worked out once: they are the same on every response, and building them per request (as `@fastify/helmet`
// does, parsing the policy each time) was the largest single cost on the hot paths (README, "Performance").
const DOCS_HEADERS = helmetHeaders(DOCS_OPTIONS);
const API_HEADERS = helmetHeaders(API_OPTIONS);

/** The security headers for a response to `url` (the request's path and query). */
export function securityHeadersFor(url: string): Readonly<Record<string, string>> {
  return url.startsWith(`/${DOCS_PATH}`) ? DOCS_HEADERS : API_HEADERS;
}
