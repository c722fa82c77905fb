import { resolve } from 'node:path';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/** Everything the service reads from its environment, validated and typed. */
export interface AppConfig {
  host: string;
  port: number;
  /** Absent: the service starts an embedded PostgreSQL under `dataDir`. */
  databaseUrl?: string;
  apiKeys: string[];
  logLevel: LogLevel;
  migrationsRun: boolean;
  dataDir: string;
  embeddedPostgresPort: number;
  production: boolean;
  /** Requests per minute per API key; 0 turns per-key limiting off. */
  rateLimitPerMinute: number;
  /** Failed authentications per minute per client address before it gets 429s. */
  authFailureLimitPerMinute: number;
  /** Set: rate-limit counters live in this Redis, shared by every instance. */
  redisUrl?: string;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be "true" or "false", got "${raw}"`);
  return raw === 'true';
}

function databaseUrl(env: Env): string | undefined {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === '') return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError('DATABASE_URL must be a URL such as postgres://user:password@host:5432/db');
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  return raw;
}

function redisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL;
  if (raw === undefined || raw === '') return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError('REDIS_URL must be a URL such as redis://127.0.0.1:6379');
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  }
  return raw;
}

function apiKeys(env: Env): string[] {
  const keys = (env.API_KEYS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
  const invalid = keys.findIndex((key) => !/^[\x21-\x7e]{16,512}$/.test(key));
  if (invalid !== -1) {
    throw new ConfigError(`API_KEYS entry ${invalid + 1} must be 16 to 512 printable characters without spaces`);
  }
  return keys;
}

function logLevel(env: Env): LogLevel {
  const raw = env.LOG_LEVEL;
  if (raw === undefined || raw === '') return 'info';
  if (!LOG_LEVELS.includes(raw as LogLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  }
  return raw as LogLevel;
}

/** Reads and validates the configuration; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: Env = process.env): AppConfig {
  return {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    databaseUrl: databaseUrl(env),
    apiKeys: apiKeys(env),
    logLevel: logLevel(env),
    migrationsRun: boolean(env, 'MIGRATIONS_RUN', true),
    dataDir: resolve(env.DATA_DIR || '.data'),
    embeddedPostgresPort: integer(env, 'EMBEDDED_POSTGRES_PORT', 5433, 1, 65535),
    production: env.NODE_ENV === 'production',
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 0, 1_000_000),
    authFailureLimitPerMinute: integer(env, 'AUTH_FAILURE_LIMIT_PER_MINUTE', 30, 1, 1_000_000),
    redisUrl: redisUrl(env),
  };
}
