import { NestFactory } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppModule } from '../app.module.js';
import { createFastifyAdapter } from '../app.setup.js';
import { loadConfig } from '../config/app-config.js';
import { createOpenApiDocument } from '../openapi/openapi-document.js';

/** `openapi.json` at the repository root: beside the package.json above src/cli (tests) or dist/src/cli (the script). */
export const OPENAPI_FILE = join(packageRoot(dirname(fileURLToPath(import.meta.url))), 'openapi.json');

function packageRoot(directory: string): string {
  if (existsSync(join(directory, 'package.json')) || directory === dirname(directory)) return directory;
  return packageRoot(dirname(directory));
}

/**
 * The document the code produces with the default configuration, without a
 * database: in preview mode Nest builds the module graph but instantiates no
 * provider, so TypeORM never connects.
 */
export async function buildOpenApiDocument(): Promise<OpenAPIObject> {
  const config = { ...loadConfig({}), databaseUrl: 'postgres://unused@127.0.0.1/unused' };
  const app = await NestFactory.create(AppModule.forRoot(config), createFastifyAdapter(), {
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
