import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { allowedMethods, API_PATH } from './http.constants.js';

/** How long a browser may reuse a preflight's answer: a change of CORS_ORIGINS or of a route lingers no longer. */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** `@fastify/cors` adds nothing but `Vary: Origin` for a request given this. */
const NO_CORS: FastifyCorsOptions = { origin: false };

/** Cross-origin access to `/v1/...` (docs/operating.md). */
export const cors = fp<{ origins: readonly string[]; requestHeaders: string[]; exposedHeaders: string[] }>(
  (fastify, policy, done) => {
    if (policy.origins.length === 0) return done();
    const anyOrigin = policy.origins.includes('*');
    const allowed = new Set(policy.origins);
    const shared: FastifyCorsOptions = {
      allowedHeaders: policy.requestHeaders,
      exposedHeaders: policy.exposedHeaders,
      maxAge: PREFLIGHT_MAX_AGE_SECONDS,
      // Keys travel in `Authorization`, never in cookies.
      credentials: false,
      // An OPTIONS without Access-Control-Request-Method gets no CORS below, not the plugin's plain-text 400.
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
      const methods = allowedMethods(fastify, request.url);
      return methods.length === 0 ? NO_CORS : { ...answer, methods };
    };

    void fastify.register(fastifyCors, {
      // The OpenAPI document is Nest's and says nothing of CORS.
      hideOptionsRoute: true,
      delegator: (request, callback) => callback(null, optionsFor(request)),
    });
    done();
  },
  { name: 'cors', dependencies: ['in-flight-shedding', 'single-value-headers'] },
);
