import { SetMetadata, UseInterceptors, applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiOperation } from '@nestjs/swagger';
import {
  DEPRECATION_POLICY,
  DeprecationInterceptor,
  DeprecationPolicy,
  deprecationHeaders,
} from './deprecation.interceptor.js';

/** Carries the headers to the OpenAPI document's build, which documents them on each response and removes it. */
export const DEPRECATION_HEADERS_EXTENSION = 'x-deprecation-headers';

/**
 * Deprecates a route: `Deprecation`, `Sunset` and `Link` headers on each response, a warning per call, and in the
 * OpenAPI document `deprecated`, the removal date and the policy's advice (`summary: undefined` keeps the route's own).
 */
export const Deprecated = (policy: DeprecationPolicy) =>
  applyDecorators(
    SetMetadata(DEPRECATION_POLICY, policy),
    UseInterceptors(DeprecationInterceptor),
    ApiOperation({
      operationId: policy.operationId,
      summary: undefined,
      deprecated: true,
      description: `Deprecated: announced for removal on ${policy.sunset.toLocaleDateString('en-GB', { dateStyle: 'long', timeZone: 'UTC' })}. ${policy.advice}`,
    }),
    ApiExtension(DEPRECATION_HEADERS_EXTENSION, deprecationHeaders(policy)),
  );
