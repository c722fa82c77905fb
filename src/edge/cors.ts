import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { allowedMethods } from './allowed-methods.js';
import { API_PREFIX } from './http.constants.js';

/**
 * How long a browser may reuse a preflight's answer, in seconds. Chromium caps it at 7200 and Firefox at 86400;
 * ten minutes keeps a change of CORS_ORIGINS or of a route's methods from lingering in browsers.
 */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

export interface CorsPolicy {
  /** CORS_ORIGINS: exact origins, or `*` for any. Empty: CORS stays off and no response changes. */
  origins: readonly string[];
  /** What a cross-origin page may send beside the CORS-safelisted headers. */
  requestHeaders: readonly string[];
  /** What a cross-origin script may read beside the CORS-safelisted response headers. */
  exposedHeaders: readonly string[];
}

const API_PATH = `/${API_PREFIX}/`;
/** `@fastify/cors` adds nothing but `Vary: Origin` for a request given this. */
const NO_CORS: FastifyCorsOptions = { origin: false };

/**
 * Cross-origin access to the API (`/v1/...`) for the pages of the allowed origins, through `@fastify/cors`.
 *
 * Registered before load shedding, its `onRequest` hook runs before every refusal a route can give (401, 403, 404,
 * 413, 429, 503, 500), so they all carry `Access-Control-Allow-Origin` and the page can read why it was refused. It
 * answers a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) in that hook with 204: before
 * the guards (no key, no budget) and before load shedding, like the probes; the request log and the metrics
 * still see it, under OPTIONS and the plugin's catch-all route `*`.
 *
 * A request from an origin not allowed, an `OPTIONS` that is no preflight, a path outside the API and a path with
 * no route get no CORS headers: the browser blocks the first; the others go on to their usual 404 or 405.
 * No `Access-Control-Allow-Credentials`: keys travel in `Authorization`, never in cookies.
 */
export function registerCors(fastify: FastifyInstance, policy: CorsPolicy): void {
  if (policy.origins.length === 0) return;
  const anyOrigin = policy.origins.includes('*');
  const allowed = new Set(policy.origins);
  const shared: FastifyCorsOptions = {
    allowedHeaders: [...policy.requestHeaders],
    exposedHeaders: [...policy.exposedHeaders],
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    credentials: false,
    // An OPTIONS from an allowed origin without Access-Control-Request-Method is refused below, before the
    // plugin's own 400 in plain text.
    strictPreflight: false,
  };

  const optionsFor = (request: FastifyRequest): FastifyCorsOptions => {
    const origin = request.headers.origin;
    if (origin === undefined || !(anyOrigin || allowed.has(origin)) || !request.url.startsWith(API_PATH)) {
      return NO_CORS;
    }
    const answer = { ...shared, origin: anyOrigin ? '*' : origin };
    if (request.method !== 'OPTIONS') return answer;
    if (request.headers['access-control-request-method'] === undefined) return NO_CORS;
    const methods = allowedMethods(fastify, request.url.split('?', 1)[0]);
    return methods.length === 0 ? NO_CORS : { ...answer, methods };
  };

  void fastify.register(fastifyCors, {
    // Hidden from any document built from Fastify's routes; the OpenAPI document is Nest's and says nothing of CORS.
    hideOptionsRoute: true,
    delegator: (request, callback) => callback(null, optionsFor(request)),
  });
}
