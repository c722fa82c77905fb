import { NestFactory } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { join } from 'node:path';
import { AppModule } from '../src/app.module.js';
import { createFastifyAdapter } from '../src/app.setup.js';
import { loadConfig } from '../src/config/app-config.js';
import { createOpenApiDocument } from '../src/openapi/openapi-document.js';
import { PACKAGE_ROOT } from '../src/config/package-root.js';

/** A DATABASE_URL for a configuration nothing connects with. */
const UNUSED_DATABASE_URL = 'postgres://unused@127.0.0.1/unused';

/** `openapi.json` at the repository root. */
export const OPENAPI_FILE = join(PACKAGE_ROOT, 'openapi.json');

/**
 * The document the code produces with the default configuration, without a
 * database: in preview mode Nest builds the module graph but instantiates no
 * provider, so TypeORM never connects.
 */
export async function buildOpenApiDocument(): Promise<OpenAPIObject> {
  const config = loadConfig({ DATABASE_URL: UNUSED_DATABASE_URL });
  const app = await NestFactory.create(AppModule.forRoot(config), createFastifyAdapter(config), {
    preview: true,
    logger: false,
  });
  try {
    return createOpenApiDocument(app, config);
  } finally {
    await app.close();
  }
}

export function serializeOpenApiDocument(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
