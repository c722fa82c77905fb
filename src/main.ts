import { Logger } from '@nestjs/common';
import { createApp } from './app.setup.js';
import { API_PREFIX, DOCS_PATH } from './edge/http.constants.js';
import { readConfig } from './config/app-config.js';
import { ConfigError } from './config/problem.js';
import { SHUTDOWN_SIGNALS } from './edge/shutdown-state.js';
import { configuredSecrets } from './observability/secret-scrubber.js';
import { scrubTracesOf } from './observability/tracing/tracing-state.js';

async function bootstrap(): Promise<void> {
  const logger = new Logger('Bootstrap');
  const config = await readConfig('service');
  scrubTracesOf(configuredSecrets(config));

  const app = await createApp(config);
  // GracefulShutdown drains first; then exit 0 (by default Nest raises the signal again, which ends the process).
  app.enableShutdownHooks([...SHUTDOWN_SIGNALS], { useProcessExit: true });
  await app.listen(config.port, config.host);
  const base = `http://${config.host}:${config.port}`;
  logger.log(`Animal store API on ${base}/${API_PREFIX} (send Authorization: Bearer <key>)`);
  logger.log(`API documentation on ${base}/${DOCS_PATH}`);
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`Invalid configuration: ${error.message}\n`);
  else new Logger('Bootstrap').error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
