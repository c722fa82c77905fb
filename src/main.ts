import { Logger } from '@nestjs/common';
import { relative } from 'node:path';
import { createApp, API_PREFIX } from './app.setup.js';
import { ConfigError, loadConfig } from './config/app-config.js';
import { DOCS_PATH } from './docs/setup-docs.js';
import { developmentApiKey, developmentKeyFile } from './auth/development-key.js';
import { startEmbeddedPostgres } from './database/embedded-postgres.js';
import { stopGracefullyOnSignals } from './lifecycle/graceful-shutdown.js';

async function bootstrap(): Promise<void> {
  const logger = new Logger('Bootstrap');
  const config = loadConfig();

  let authHint = 'send Authorization: Bearer <one of API_KEYS>';
  if (config.apiKeys.length === 0 && !config.production) {
    config.apiKeys.push(await developmentApiKey(config.dataDir));
    authHint = `send Authorization: Bearer $(cat ${relative(process.cwd(), developmentKeyFile(config.dataDir))})`;
  }

  const embedded = config.databaseUrl
    ? null
    : await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort });

  const app = await createApp({ ...config, databaseUrl: config.databaseUrl ?? embedded!.url });
  stopGracefullyOnSignals(app, {
    graceMs: config.shutdownGraceMs,
    afterClose: async () => embedded?.stop(),
    logger,
  });
  await app.listen(config.port, config.host);
  logger.log(`Animal store API on http://${config.host}:${config.port}/${API_PREFIX} (${authHint})`);
  logger.log(`API documentation on http://${config.host}:${config.port}/${DOCS_PATH}`);
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`Invalid configuration: ${error.message}\n`);
  } else {
    new Logger('Bootstrap').error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  }
  process.exit(1);
});
