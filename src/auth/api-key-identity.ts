import type { FastifyRequest } from 'fastify';

/** Who is calling: the key's id and human name, never the key itself. Set as `request.user`. */
export interface ApiKeyIdentity {
  id: string;
  name: string;
}

/** A request as the API key guard leaves it: `user` is set once the key is accepted, absent on public routes. */
export type AuthenticatedRequest = FastifyRequest & { user?: ApiKeyIdentity };
