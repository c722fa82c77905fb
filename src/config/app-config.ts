import { resolve } from 'node:path';

/** The largest RATE_LIMIT_PER_MINUTE and AUTH_FAILURE_LIMIT_PER_MINUTE accepted (the OpenAPI document's bound too). */
export const MAX_LIMIT_PER_MINUTE = 1_000_000;

export type LogLevel = 'silent' | 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
const LOG_LEVELS: readonly LogLevel[] = ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/** Thresholds past which requests are shed with 503; 0 turns one off. */
export interface LoadSheddingConfig {
  /** Requests being served at once; past it, new ones are refused rather than queued. */
  maxInFlight: number;
  maxEventLoopDelayMs: number;
  /** 0 to 1: the share of time the event loop was busy over the last sample. */
  maxEventLoopUtilization: number;
}

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
  /** Signs pagination cursors. Absent (development only): a random secret per process. */
  cursorSecret?: string;
  /** Production and staging base URLs listed as `servers` in the OpenAPI document; each ends in `/v1`. */
  publicBaseUrl: string;
  stagingBaseUrl: string;
  /** How long in-flight requests may run after SIGTERM/SIGINT before the process exits anyway. */
  shutdownGraceMs: number;
  /** Absent: `/metrics` needs no credentials (keep the port private then). */
  metricsToken?: string;
  loadShedding: LoadSheddingConfig;
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

function fraction(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(raw)) throw new ConfigError(`${name} must be a number from 0 to 1, got "${raw}"`);
  return Number(raw);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be "true" or "false", got "${raw}"`);
  return raw === 'true';
}

/** An optional URL whose scheme must be one of `protocols` (each with its colon, as `URL.protocol` gives it). */
function optionalUrl(env: Env, name: string, protocols: [string, string], example: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError(`${name} must be a URL such as ${example}`);
  }
  if (!protocols.includes(protocol)) {
    throw new ConfigError(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
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

function baseUrl(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL such as ${fallback}, got "${raw}"`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || !/\/v1\/?$/.test(url.pathname) || url.search || url.hash) {
    throw new ConfigError(`${name} must be an http(s) URL ending in /v1, got "${raw}"`);
  }
  return raw.replace(/\/$/, '');
}

function logLevel(env: Env): LogLevel {
  const raw = env.LOG_LEVEL;
  if (raw === undefined || raw === '') return 'info';
  if (!LOG_LEVELS.includes(raw as LogLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  }
  return raw as LogLevel;
}

export const CURSOR_SECRET_MIN_LENGTH = 32;

// Every instance behind a load balancer must verify the cursors the others sign,
// so production refuses to start with a per-process secret.
function cursorSecret(env: Env, production: boolean): string | undefined {
  const raw = env.CURSOR_SECRET;
  if (raw === undefined || raw === '') {
    if (production) {
      throw new ConfigError('CURSOR_SECRET is required when NODE_ENV=production (the same value on every instance)');
    }
    return undefined;
  }
  if (raw.length < CURSOR_SECRET_MIN_LENGTH) {
    throw new ConfigError(`CURSOR_SECRET must be at least ${CURSOR_SECRET_MIN_LENGTH} characters`);
  }
  return raw;
}

function metricsToken(env: Env): string | undefined {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]{16,512}$/.test(raw)) {
    throw new ConfigError('METRICS_TOKEN must be 16 to 512 printable characters without spaces');
  }
  return raw;
}

/** Reads and validates the configuration; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: Env = process.env): AppConfig {
  const production = env.NODE_ENV === 'production';
  return {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    databaseUrl: optionalUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], 'postgres://user:password@host:5432/db'),
    apiKeys: apiKeys(env),
    logLevel: logLevel(env),
    migrationsRun: boolean(env, 'MIGRATIONS_RUN', true),
    dataDir: resolve(env.DATA_DIR || '.data'),
    embeddedPostgresPort: integer(env, 'EMBEDDED_POSTGRES_PORT', 5433, 1, 65535),
    production,
    cursorSecret: cursorSecret(env, production),
    publicBaseUrl: baseUrl(env, 'PUBLIC_BASE_URL', 'https://api.example.com/v1'),
    stagingBaseUrl: baseUrl(env, 'STAGING_BASE_URL', 'https://staging-api.example.com/v1'),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    metricsToken: metricsToken(env),
    loadShedding: {
      maxInFlight: integer(env, 'LOAD_SHEDDING_MAX_IN_FLIGHT', 256, 0, 100_000),
      maxEventLoopDelayMs: integer(env, 'LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS', 1000, 0, 60_000),
      maxEventLoopUtilization: fraction(env, 'LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION', 0),
    },
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 0, MAX_LIMIT_PER_MINUTE),
    authFailureLimitPerMinute: integer(env, 'AUTH_FAILURE_LIMIT_PER_MINUTE', 30, 1, MAX_LIMIT_PER_MINUTE),
    redisUrl: optionalUrl(env, 'REDIS_URL', ['redis:', 'rediss:'], 'redis://127.0.0.1:6379'),
  };
}
