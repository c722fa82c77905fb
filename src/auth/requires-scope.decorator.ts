import { applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { ApiInsufficientScopeResponse } from '../openapi/api-error-responses.decorator.js';
import { type ApiKeyScope, RequiredScope } from './api-key-scope.js';

/** The OpenAPI extension naming the scopes an operation needs (HTTP bearer has no scopes in OpenAPI 3.0). */
export const REQUIRED_SCOPES_EXTENSION = 'x-required-scopes';

/**
 * The scope an operation needs, in one place: the guard answers a key limited to other scopes with 403, and the
 * OpenAPI document declares that 403 and names the scope (`x-required-scopes`, and the description).
 */
export const RequiresScope = (scope: ApiKeyScope) =>
  applyDecorators(
    RequiredScope(scope),
    ApiExtension(REQUIRED_SCOPES_EXTENSION, [scope]),
    ApiInsufficientScopeResponse(scope),
  );
