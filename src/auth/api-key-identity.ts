import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { ApiKeyScope } from './api-key-scope.js';

/** Who is calling: the key's id and human name, never the key itself. Set as `request.user`. */
export interface ApiKeyIdentity {
  id: string;
  name: string;
  /** null: every scope. */
  scopes: readonly ApiKeyScope[] | null;
  /** The id of the first key of its lineage (its own, unless a rotation's replacement): scopes Idempotency-Keys. */
  lineage: string;
}

/** Why a presented key was refused, as counted in `animal_store_api_key_refusals_total`. */
export const API_KEY_REFUSAL_REASONS = ['unknown', 'revoked', 'expired', 'insufficient_scope'] as const;
export type ApiKeyRefusalReason = (typeof API_KEY_REFUSAL_REASONS)[number];

export type InvalidKeyReason = Exclude<ApiKeyRefusalReason, 'insufficient_scope'>;

export type ApiKeyVerdict = ApiKeyIdentity | InvalidKeyReason;

/** A request as the API key guard leaves it: `user` is set once the key is accepted, absent on public routes. */
export type AuthenticatedRequest = FastifyRequest & { user?: ApiKeyIdentity };

export const CurrentApiKey = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiKeyIdentity =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().user!,
);
