import type { FastifyInstance } from 'fastify';

/**
 * The methods a path may be called with. OPTIONS is not among them: no route of the service answers it, and the
 * catch-all OPTIONS route that `@fastify/cors` adds when CORS_ORIGINS is set answers preflights only, so every
 * other OPTIONS is still refused with 405.
 */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The methods a route answers at `path` (no query string): a 405's `Allow`, a preflight's allowed methods. */
export function allowedMethods(fastify: FastifyInstance, path: string): string[] {
  return METHODS.filter((method) => fastify.findRoute({ method, url: path }) !== null);
}
