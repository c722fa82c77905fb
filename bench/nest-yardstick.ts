/** How the NestJS yardsticks (nest-floor.ts, straightforward-app.ts) start: Fastify, the `/v1` prefix, no logger. */
import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';

/** Serves `module` on PORT, on 127.0.0.1, until SIGTERM; then closes the app and runs `afterClose`. */
export async function serveNest(module: Type, afterClose?: () => Promise<void>): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter({ bodyLimit: 16 * 1024 }), {
    logger: false,
  });
  app.setGlobalPrefix('v1');
  await app.listen(Number(process.env.PORT), '127.0.0.1');
  process.once('SIGTERM', () => void app.close().then(afterClose));
}
