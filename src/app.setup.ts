import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LoggerService, LogLevel } from '@nestjs/common';
import { AppModule, ResolvedConfig } from './app.module.js';
import { setupDocs } from './docs/setup-docs.js';
import { handleClientError, handleFrameworkError } from './http/framework-errors.js';
import { registerJsonBodyParser } from './http/json-body-parser.js';

export const API_PREFIX = 'v1';
export const BODY_LIMIT_BYTES = 16 * 1024;

export function createFastifyAdapter(): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
  });
}

/** What cannot be a provider: prefix, body parsing and the API docs. Shared by main.ts and the tests. */
export function configureApp(app: NestFastifyApplication): void {
  app.setGlobalPrefix(API_PREFIX);
  // Only JSON bodies are accepted; Fastify's default text/plain parser would let other bodies through to validation.
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeContentTypeParser('text/plain');
  registerJsonBodyParser(fastify);
  setupDocs(app);
}

export async function createApp(
  config: ResolvedConfig,
  logger?: LoggerService | LogLevel[] | false,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), createFastifyAdapter(), {
    logger,
    abortOnError: false,
    // Nest's parsers would add application/x-www-form-urlencoded; Fastify's own JSON parser is the only one we want.
    bodyParser: false,
  });
  configureApp(app);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
