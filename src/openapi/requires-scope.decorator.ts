import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { type ApiKeyScope, REQUIRED_SCOPE } from '../auth/api-key-scope.js';
import { ApiInsufficientScopeResponse } from './api-error-responses.decorator.js';

/** The OpenAPI extension naming the scopes an operation needs (HTTP bearer has no scopes in OpenAPI 3.0). */
export const REQUIRED_SCOPES_EXTENSION = 'x-required-scopes';

/**
 * The scope an operation needs, in one place: the API key guard reads it (a key limited to other scopes is
 * answered 403), and the OpenAPI document declares that 403 and names the scope (`x-required-scopes`, and the
 * description). It lives beside the document, which it describes, so that auth imports nothing of the docs.
 */
export const RequiresScope = (scope: ApiKeyScope) =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    ApiExtension(REQUIRED_SCOPES_EXTENSION, [scope]),
    ApiInsufficientScopeResponse(scope),
  );
