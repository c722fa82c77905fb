import type { FastifyReply, FastifyRequest } from 'fastify';
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

const docsHelmet = helmet(DOCS_OPTIONS);
const apiHelmet = helmet(API_OPTIONS);

/**
 * An `onRequest` hook: helmet's middleware, built once per policy, sets the security headers on every
 * response to the request, errors included. Built per request (as `@fastify/helmet` does, parsing the policy
 * each time) it was the largest single cost on the hot paths; built once it costs well under a microsecond.
 */
export function setSecurityHeaders(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  const middleware = request.url.startsWith(`/${DOCS_PATH}`) ? docsHelmet : apiHelmet;
  middleware(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined));
}
