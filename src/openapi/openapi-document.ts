import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type {
  OperationObject,
  ReferenceObject,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import { maxHeaderSize } from 'node:http';
import { API_PREFIX, BODY_LIMIT_BYTES } from '../edge/http.constants.js';
import type { AppConfig } from '../config/app-config.js';
import { NO_STORE } from '../edge/security-headers.js';
import { MAX_BODY_DEPTH } from '../edge/json-body-parser.js';
import { REQUIRED_SCOPES_EXTENSION } from './requires-scope.decorator.js';

export const BEARER_SCHEME = 'bearer';

/**
 * The instance serving the document, as a URL relative to the page or document it is read from: `/docs` and
 * `/docs-json` sit beside `/v1`, so `v1` resolves to this instance's API, also when a proxy mounts the service
 * under a path prefix (`/api/docs` finds `/api/v1`). No header from the proxy needs to be trusted.
 */
export const THIS_SERVER = API_PREFIX;

const DESCRIPTION = [
  "Manage a store's animals: list them (optionally by availability status), add one, fetch one by id.",
  '',
  'Every operation needs an API key sent as `Authorization: Bearer <API_KEY>`.',
  'Every error response is an `Error` object (`code`, `message`, `status`) with media type `application/json`.',
  `A request whose line and headers together exceed ${maxHeaderSize / 1024} KiB is refused with 400 ` +
    `\`validation_failed\`; a body over ${BODY_LIMIT_BYTES / 1024} KiB with 413, one nested deeper than ` +
    `${MAX_BODY_DEPTH} levels with 400 \`invalid_json\`, a compressed one (\`Content-Encoding\`) with 415.`,
  'A request repeating `Host`, `Authorization` or `Idempotency-Key` is refused with 400.',
  `A key may be limited to scopes (\`pets:read\`, \`pets:write\`): each operation names the one it needs in ` +
    `\`${REQUIRED_SCOPES_EXTENSION}\`, and a key without it is answered 403 \`insufficient_scope\`. A key without ` +
    'scopes may call every operation. An expired key is answered 401 like an unknown one, with a message saying it expired.',
  "Every response carries `X-Request-Id`: the client's own when it sent a usable one, else a new UUID.",
].join('\n');

/**
 * The OpenAPI document, built from the controllers' and DTOs' decorators.
 * Paths are relative to the servers, which all end in `/v1`.
 */
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
    .addServer(THIS_SERVER, 'This server (local, staging or production: wherever this document is served from)')
    .addTag('animals', "The store's animals.")
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'API key', description: 'An API key, sent as the bearer token.' },
      BEARER_SCHEME,
    )
    .addSecurityRequirements(BEARER_SCHEME)
    .build();
  // Every server is public: the API has no internal-only audience.
  options.servers = options.servers?.map((server) => ({ ...server, 'x-internal': false }));
  const document = SwaggerModule.createDocument(app, options, { ignoreGlobalPrefix: true });
  const schemas = document.components?.schemas ?? {};
  for (const item of Object.values(document.paths)) {
    for (const operation of [item.get, item.put, item.post, item.patch, item.delete]) {
      if (!operation) continue;
      closeRequestBody(operation, schemas);
      declareNoStore(operation);
      describeRequiredScopes(operation);
    }
  }
  return document;
}

/** The operation's description names its scope, as its `x-required-scopes` extension does. */
function describeRequiredScopes(operation: OperationObject): void {
  const scopes = (operation as unknown as Record<string, unknown>)[REQUIRED_SCOPES_EXTENSION] as string[] | undefined;
  if (!scopes) return;
  const named = scopes.map((scope) => `\`${scope}\``).join(' and ');
  operation.description =
    `${operation.description ?? ''}\n\nNeeds an API key with the ${named} scope, or one without scopes; ` +
    'any other key is answered 403 `insufficient_scope`.';
}

/** `Cache-Control: no-store` on every response, as the edge sends it (src/edge/security-headers.ts). */
function declareNoStore(operation: OperationObject): void {
  const [, value] = NO_STORE;
  const header = {
    description: 'Every answer depends on the API key: no cache may store it.',
    required: true,
    schema: { type: 'string', enum: [value] },
  };
  for (const response of Object.values(operation.responses ?? {}) as ResponseObject[]) {
    response.headers = { ...response.headers, 'Cache-Control': header };
  }
}

/**
 * `additionalProperties: false` on the request body's object schema: the validation pipe refuses unknown
 * properties (src/edge/request-validation.pipe.ts).
 */
function closeRequestBody(operation: OperationObject, schemas: Record<string, SchemaObject | ReferenceObject>): void {
  const body = operation.requestBody as RequestBodyObject | undefined;
  for (const media of Object.values(body?.content ?? {})) {
    const ref = (media.schema as ReferenceObject | undefined)?.$ref;
    const schema = (ref ? schemas[ref.replace('#/components/schemas/', '')] : media.schema) as SchemaObject | undefined;
    if (schema?.type === 'object') schema.additionalProperties = false;
  }
}
