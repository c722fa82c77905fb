import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LoggerService, LogLevel } from '@nestjs/common';
import { AppModule, ResolvedConfig } from './app.module.js';
import { APP_CONFIG } from './config/config.module.js';
import type { AppConfig } from './config/app-config.js';
import { handleClientError, handleFrameworkError } from './http/framework-errors.js';
import { registerLoadShedding } from './http/load-shedding.js';

export const API_PREFIX = 'v1';
export const BODY_LIMIT_BYTES = 16 * 1024;

export function createFastifyAdapter(): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
  });
}

/** What cannot be a provider: prefix, body parsing, load shedding. Shared by main.ts and the tests. */
export function configureApp(app: NestFastifyApplication): void {
  app.setGlobalPrefix(API_PREFIX);
  const fastify = app.getHttpAdapter().getInstance();
  // Only JSON bodies are accepted; Fastify's default text/plain parser would let other bodies through to validation.
  fastify.removeContentTypeParser('text/plain');
  registerLoadShedding(fastify, app.get<AppConfig>(APP_CONFIG).loadShedding);
}

export async function createApp(
  config: ResolvedConfig,
  logger?: LoggerService | LogLevel[] | false,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), createFastifyAdapter(), {
    logger,
    abortOnError: false,
  });
  configureApp(app);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
