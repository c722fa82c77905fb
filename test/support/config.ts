import { AppConfig, loadConfig } from '../../src/config/app-config.js';

/** A DATABASE_URL for a configuration nothing connects with. */
export const UNUSED_DATABASE_URL = 'postgres://unused@127.0.0.1/unused';

/** The service's defaults (every variable unset but the required DATABASE_URL), on `databaseUrl`. */
export const defaultConfig = (databaseUrl = UNUSED_DATABASE_URL): AppConfig =>
  loadConfig({ DATABASE_URL: databaseUrl });
