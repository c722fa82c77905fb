import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiResponse } from '@nestjs/swagger';
import { type ApiKeyScope, REQUIRED_SCOPE } from '../auth/api-key-scope.js';
import { insufficientScope } from '../auth/key-refused.error.js';
import { ErrorBody } from '../edge/errors/api-error.js';
import { bearerChallenge } from '../edge/http.constants.js';
import { enumHeader } from './api-error-responses.decorator.js';

/** The OpenAPI extension naming the scopes an operation needs (HTTP bearer has no scopes in OpenAPI 3.0). */
export const REQUIRED_SCOPES_EXTENSION = 'x-required-scopes';

// The scope an operation needs, read by the API key guard, and its documentation: the extension and the 403, which
// the guard answers before the rate limits and any interceptor run, so it carries none of their headers.
export const RequiresScope = (scope: ApiKeyScope) =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    ApiExtension(REQUIRED_SCOPES_EXTENSION, [scope]),
    ApiResponse({
      status: 403,
      description: `The API key is valid but limited to scopes without \`${scope}\`, which this operation needs.`,
      type: ErrorBody,
      example: insufficientScope(scope).toBody(),
      headers: {
        'WWW-Authenticate': enumHeader(
          'The bearer challenge (RFC 6750 §3.1), naming the scope the operation needs.',
          true,
          [bearerChallenge({ error: 'insufficient_scope', scope })],
        ),
      },
    }),
  );
