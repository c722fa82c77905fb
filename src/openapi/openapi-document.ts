import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, type OperationObject, SwaggerModule } from '@nestjs/swagger';
import type { ReferenceObject, RequestBodyObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { maxHeaderSize } from 'node:http';
import { API_KEY_SCOPES } from '../auth/api-key-scope.js';
import { API_PREFIX, BODY_LIMIT_BYTES } from '../edge/http.constants.js';
import type { AppConfig } from '../config/app-config.js';
import { NO_STORE } from '../edge/security-headers.js';
import { MAX_BODY_DEPTH } from '../edge/json-body-parser.js';
import { DEPRECATION_HEADERS_EXTENSION } from '../deprecation/deprecated.decorator.js';
import { enumHeader, interceptedHeaders } from './api-error-responses.decorator.js';
import { REQUIRED_SCOPES_EXTENSION } from './requires-scope.decorator.js';

const DESCRIPTION = [
  "Manage a store's animals: list them (optionally by availability status), add one, fetch one by id.",
  '',
  'Every operation needs an API key sent as `Authorization: Bearer <API_KEY>`.',
  'Every error response is an `Error` object (`code`, `message`, `status`) with media type `application/json`.',
  `A request whose line and headers together exceed ${maxHeaderSize / 1024} KiB is refused with 400 ` +
    `\`validation_failed\`; a body over ${BODY_LIMIT_BYTES / 1024} KiB with 413, one nested deeper than ` +
    `${MAX_BODY_DEPTH} levels with 400 \`invalid_json\`, a compressed one (\`Content-Encoding\`) with 415.`,
  'A request repeating `Host`, `Authorization` or `Idempotency-Key` is refused with 400.',
  `A key may be limited to scopes (${API_KEY_SCOPES.map((scope) => `\`${scope}\``).join(', ')}): each operation names the one it needs in ` +
    `\`${REQUIRED_SCOPES_EXTENSION}\`, and a key without it is answered 403 \`insufficient_scope\`. A key without ` +
    'scopes may call every operation. An expired key is answered 401 like an unknown one, with a message saying it expired.',
  "Every response carries `X-Request-Id`: the client's own when it sent a usable one, else a new UUID.",
].join('\n');

/** The OpenAPI document, built from the controllers' and DTOs' decorators; paths are relative to the `/v1` servers. */
export function createOpenApiDocument(
  app: INestApplication,
  config: Pick<AppConfig, 'publicBaseUrl' | 'stagingBaseUrl'>,
): OpenAPIObject {
  const options = new DocumentBuilder()
    .setTitle('Animal store service')
    .setDescription(DESCRIPTION)
    .setVersion('1.0.0')
    .addServer(config.publicBaseUrl, 'Production')
    .addServer(config.stagingBaseUrl, 'Staging')
    // `v1` beside `/docs` resolves to the instance serving the document, also under a proxy's path prefix.
    .addServer(API_PREFIX, 'This server (local, staging or production: wherever this document is served from)')
    .addTag('animals', "The store's animals.")
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'API key', description: 'An API key, sent as the bearer token.' },
      'bearer',
    )
    .addSecurityRequirements('bearer')
    .build();
  // Every server is public: the API has no internal-only audience.
  options.servers = options.servers?.map((server) => ({ ...server, 'x-internal': false }));
  const document = SwaggerModule.createDocument(app, options, { ignoreGlobalPrefix: true });
  const noStore = () => enumHeader('Every answer depends on the API key: no cache may store it.', true, [NO_STORE[1]]);
  for (const operation of Object.values(document.paths).flatMap((item) => Object.values(item) as OperationObject[])) {
    // The validation pipe refuses unknown properties (src/edge/request-validation.pipe.ts).
    for (const media of Object.values((operation.requestBody as RequestBodyObject | undefined)?.content ?? {})) {
      const ref = (media.schema as ReferenceObject | undefined)?.$ref;
      const schema = (ref ? document.components?.schemas?.[ref.split('/').pop()!] : media.schema) as
        SchemaObject | undefined;
      if (schema?.type === 'object') schema.additionalProperties = false;
    }
    const extended = operation as { [DEPRECATION_HEADERS_EXTENSION]?: Record<string, string> };
    const deprecation = extended[DEPRECATION_HEADERS_EXTENSION];
    delete extended[DEPRECATION_HEADERS_EXTENSION];
    // Cache-Control: sent on every response by the edge (src/edge/security-headers.ts).
    for (const [status, response] of Object.entries(operation.responses) as [string, ResponseObject][]) {
      const { description, headers, ...rest } = response;
      const all = { ...interceptedHeaders(status, deprecation), ...headers, 'Cache-Control': noStore() };
      operation.responses[status] = { description, headers: all, ...rest };
    }
    const scopes = (operation as { [REQUIRED_SCOPES_EXTENSION]?: string[] })[REQUIRED_SCOPES_EXTENSION];
    if (scopes) {
      operation.description =
        `${operation.description ?? ''}\n\nNeeds an API key with the ${scopes.map((s) => `\`${s}\``).join(' and ')} ` +
        'scope, or one without scopes; any other key is answered 403 `insufficient_scope`.';
    }
  }
  return document;
}
