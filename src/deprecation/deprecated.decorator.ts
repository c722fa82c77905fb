import { SetMetadata, UseInterceptors, applyDecorators } from '@nestjs/common';
import { DEPRECATION_POLICY, DeprecationInterceptor, DeprecationPolicy } from './deprecation.interceptor.js';

/** Deprecates a route: `Deprecation`, `Sunset` and `Link` headers on each response, and a warning per call. */
export const Deprecated = (policy: DeprecationPolicy) =>
  applyDecorators(SetMetadata(DEPRECATION_POLICY, policy), UseInterceptors(DeprecationInterceptor));
