import type { FastifyRequest } from 'fastify';
import type { ApiKeyScope } from './api-key-scope.js';

/** Who is calling: the key's id and human name, never the key itself. Set as `request.user`. */
export interface ApiKeyIdentity {
  id: string;
  name: string;
  /** What the key may do; null: everything (keys from API_KEYS, keys issued without scopes). */
  scopes: readonly ApiKeyScope[] | null;
  /**
   * The id of the first key of its lineage: a rotation's replacement has the lineage of the key it replaces, every
   * other key its own id. What the key's Idempotency-Keys are scoped by.
   */
  lineage: string;
}

/** Why a presented key was refused, as counted in `animal_store_api_key_refusals_total`. */
export type ApiKeyRefusalReason = 'unknown' | 'revoked' | 'expired' | 'insufficient_scope';

/** Why a presented key is not valid: what a store answers for it. */
export type InvalidKeyReason = Exclude<ApiKeyRefusalReason, 'insufficient_scope'>;

/** What a store answers for a presented key: who it is, or why it is refused. */
export type ApiKeyVerdict = ApiKeyIdentity | InvalidKeyReason;

/** A request as the API key guard leaves it: `user` is set once the key is accepted, absent on public routes. */
export type AuthenticatedRequest = FastifyRequest & { user?: ApiKeyIdentity };
