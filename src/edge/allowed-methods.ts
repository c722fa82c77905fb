import type { FastifyInstance } from 'fastify';

// No OPTIONS: no route answers it but `@fastify/cors`'s preflight route, so any other OPTIONS is a 405.
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The methods a route answers at the URL's path: a 405's `Allow`, a preflight's allowed methods. */
export function allowedMethods(fastify: FastifyInstance, url: string): string[] {
  const path = url.split('?', 1)[0];
  return METHODS.filter((method) => fastify.findRoute({ method, url: path }) !== null);
}
