import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { API_PREFIX } from '../http/http.constants.js';
import type { AppConfig } from '../config/app-config.js';

export const BEARER_SCHEME = 'bearer';

const DESCRIPTION = [
  "Manage a store's animals: list them (optionally by availability status), add one, fetch one by id.",
  '',
  'Every operation needs an API key sent as `Authorization: Bearer <API_KEY>`.',
  'Every error response is an `Error` object (`code`, `message`, `status`) with media type `application/json`.',
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
    // Relative: resolved against wherever this document is served from.
    .addServer(`/${API_PREFIX}`, 'This server')
    .addTag('animals', "The store's animals.")
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'API key', description: 'An API key, sent as the bearer token.' },
      BEARER_SCHEME,
    )
    .addSecurityRequirements(BEARER_SCHEME)
    .build();
  return SwaggerModule.createDocument(app, options, { ignoreGlobalPrefix: true });
}
