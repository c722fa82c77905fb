import { UNUSED_DATABASE_URL } from '../../dev/build-openapi-document.js';
import { AppConfig, loadConfig } from '../../src/config/app-config.js';

/** The service's defaults (every variable unset but the required DATABASE_URL), on `databaseUrl`. */
export const defaultConfig = (databaseUrl = UNUSED_DATABASE_URL): AppConfig =>
  loadConfig({ DATABASE_URL: databaseUrl });
