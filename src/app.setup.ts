import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LoggerService, LogLevel } from '@nestjs/common';
import helmet from '@fastify/helmet';
import { AppModule, ResolvedConfig } from './app.module.js';
import { handleFrameworkError } from './http/framework-errors.js';

export const API_PREFIX = 'v1';
export const BODY_LIMIT_BYTES = 16 * 1024;

export function createFastifyAdapter(): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    frameworkErrors: handleFrameworkError,
  });
}

/**
 * Security headers on every response. The policy keeps Swagger UI at /docs
 * working: its scripts and styles are served from this origin, it sets
 * inline styles and shows data: images. No upgrade-insecure-requests: the
 * service is often reached over plain HTTP on a private network.
 */
const HELMET_OPTIONS = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      baseUri: ["'self'"],
      connectSrc: ["'self'"],
      fontSrc: ["'self'", 'data:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      imgSrc: ["'self'", 'data:'],
      objectSrc: ["'none'"],
      scriptSrc: ["'self'"],
      scriptSrcAttr: ["'none'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
    },
  },
};

/** What cannot be a provider: prefix, body parsing, security headers. Shared by main.ts and the tests. */
export async function configureApp(app: NestFastifyApplication): Promise<void> {
  await app.register(helmet, HELMET_OPTIONS);
  app.setGlobalPrefix(API_PREFIX);
  // Only JSON bodies are accepted; Fastify's default text/plain parser would let other bodies through to validation.
  app.getHttpAdapter().getInstance().removeContentTypeParser('text/plain');
}

export async function createApp(
  config: ResolvedConfig,
  logger?: LoggerService | LogLevel[] | false,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), createFastifyAdapter(), {
    logger,
    abortOnError: false,
  });
  await configureApp(app);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
