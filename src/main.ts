import { Logger } from '@nestjs/common';
import { relative } from 'node:path';
import { createApp } from './app.setup.js';
import { API_PREFIX, DOCS_PATH } from './edge/http.constants.js';
import { parseApiKeys, readConfig, requireDatabaseUrl } from './config/app-config.js';
import { ConfigError } from './config/problem.js';
import { developmentApiKey } from './auth/development-key.js';
import { SHUTDOWN_SIGNALS } from './edge/graceful-shutdown.js';
import { configuredSecrets } from './observability/secret-scrubber.js';
import { scrubTracesOf } from './observability/tracing/tracing-state.js';

async function bootstrap(): Promise<void> {
  const logger = new Logger('Bootstrap');
  const config = await readConfig('service');
  const databaseUrl = requireDatabaseUrl(config);

  let authHint = 'send Authorization: Bearer <one of API_KEYS>';
  if (config.apiKeys.length === 0 && !config.production) {
    const { key, file } = await developmentApiKey(config.dataDir);
    config.apiKeys.push(...parseApiKeys(key));
    authHint = `send Authorization: Bearer $(cat ${relative(process.cwd(), file)})`;
  }
  scrubTracesOf(configuredSecrets(config));

  const app = await createApp({ ...config, databaseUrl });
  // GracefulShutdown drains first; then exit 0 (by default Nest raises the signal again, which ends the process).
  app.enableShutdownHooks([...SHUTDOWN_SIGNALS], { useProcessExit: true });
  await app.listen(config.port, config.host);
  logger.log(`Animal store API on http://${config.host}:${config.port}/${API_PREFIX} (${authHint})`);
  logger.log(`API documentation on http://${config.host}:${config.port}/${DOCS_PATH}`);
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`Invalid configuration: ${error.message}\n`);
  else new Logger('Bootstrap').error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
