import { ApiError } from '../edge/errors/api-error.js';
import { ErrorCode } from '../edge/errors/error-code.js';
import { bearerChallenge } from '../edge/http.constants.js';
import type { InvalidKeyReason } from './api-key-identity.js';
import type { ApiKeyScope } from './api-key-scope.js';

/** A 401 and its bearer challenge: no key, a malformed header (`invalid_request`), or a refused key. */
export const unauthorized = (message: string, error?: 'invalid_request' | 'invalid_token') =>
  new ApiError(401, ErrorCode.Unauthorized, message, { 'WWW-Authenticate': bearerChallenge({ error }) });

/** A presented key that is not valid (unknown, revoked or expired): only an expired one is told apart. */
export function keyRefused(reason: InvalidKeyReason): ApiError {
  const expired = 'The API key has expired: use the key that replaced it, or ask for a new one.';
  return unauthorized(reason === 'expired' ? expired : 'The API key is not valid.', 'invalid_token');
}

/** A valid key without the scope the operation needs (RFC 6750 §3.1). */
export function insufficientScope(scope: ApiKeyScope): ApiError {
  const message = `This operation needs the ${scope} scope, which the API key does not have: use a key issued with ${scope}.`;
  const challenge = bearerChallenge({ error: 'insufficient_scope', scope });
  return new ApiError(403, ErrorCode.InsufficientScope, message, { 'WWW-Authenticate': challenge });
}
