import type { HeadersObject } from '@nestjs/swagger';
import { DeprecationPolicy, deprecationHeaders } from '../deprecation/deprecation.interceptor.js';

/** The `Deprecation`, `Sunset` and `Link` headers a deprecated operation sends, with the policy's values as examples. */
export function deprecationHeaderDocs(policy: DeprecationPolicy, { required }: { required: boolean }): HeadersObject {
  const values = deprecationHeaders(policy);
  return {
    Deprecation: {
      description: 'When the operation became deprecated (RFC 9745): `@` and seconds since the epoch.',
      required,
      schema: { type: 'string', enum: [values.Deprecation] },
    },
    Sunset: {
      description: 'When the operation is announced to be removed (RFC 8594), as an HTTP-date.',
      required,
      schema: { type: 'string', enum: [values.Sunset] },
    },
    Link: {
      description: 'The operation to use instead, with `rel="successor-version"`.',
      required,
      schema: { type: 'string', enum: [values.Link] },
    },
  };
}
