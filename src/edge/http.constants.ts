import type { FastifyInstance } from 'fastify';

export const API_PREFIX = 'v1';
export const API_PATH = `/${API_PREFIX}/`;
export const DOCS_PATH = 'docs';
export const BODY_LIMIT_BYTES = 16 * 1024;

type Challenge = { realm?: string; error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope'; scope?: string };

/** The `WWW-Authenticate` value of every bearer challenge the service sends or documents (RFC 6750 §3). */
export const bearerChallenge = ({ realm = 'animal-store', error, scope }: Challenge = {}) =>
  `Bearer realm="${realm}"${error ? `, error="${error}"` : ''}${scope ? `, scope="${scope}"` : ''}`;

// No OPTIONS: no route answers it but `@fastify/cors`'s preflight route, so any other OPTIONS is a 405.
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The methods a route answers at the URL's path: a 405's `Allow`, a preflight's allowed methods. */
export function allowedMethods(fastify: FastifyInstance, url: string): string[] {
  const path = url.split('?', 1)[0];
  return METHODS.filter((method) => fastify.findRoute({ method, url: path }) !== null);
}
