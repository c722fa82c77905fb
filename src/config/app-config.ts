import { ConfigModule as NestConfigModule, registerAs } from '@nestjs/config';
import { resolve } from 'node:path';
import {
  ConfigError,
  CURSOR_SECRET_MIN_LENGTH,
  DATABASE_POOL_DEFAULTS,
  DatabaseEnvironment,
  EnvironmentPart,
  LogLevel,
  MAX_LIMIT_PER_MINUTE,
  validateEnvironment,
} from './environment.js';

export { ConfigError, CURSOR_SECRET_MIN_LENGTH, DATABASE_POOL_DEFAULTS, MAX_LIMIT_PER_MINUTE };
export type { EnvironmentPart, LogLevel };

/** Thresholds past which requests are shed with 503; 0 turns one off. */
export interface LoadSheddingConfig {
  /** Requests being served at once; past it, new ones are refused rather than queued. */
  maxInFlight: number;
  maxEventLoopDelayMs: number;
  /** 0 to 1: the share of time the event loop was busy over the last sample. */
  maxEventLoopUtilization: number;
}

/** The HTTP edge's bounds on a client's time and on the connections an instance holds. */
export interface EdgeLimitsConfig {
  /** From a request's first byte until its headers are complete; past it: 408 and the connection closed. */
  headersTimeoutMs: number;
  /** From a request's first byte until its body is complete (at least headersTimeoutMs); past it: 408 and closed. */
  requestTimeoutMs: number;
  /** How long an idle kept-alive connection stays open; above the load balancer's idle timeout. */
  keepAliveTimeoutMs: number;
  /** Open connections per instance; past it, new ones are closed at once without an answer. */
  maxConnections: number;
}

/** The database pool of each instance (DATABASE_POOL_MAX, DATABASE_POOL_IDLE_TIMEOUT_MS). */
export interface DatabasePoolConfig {
  max: number;
  /** 0: idle connections stay open. */
  idleTimeoutMs: number;
}

/** What the commands that open the database read (the database part of the environment), validated and typed. */
export interface DatabaseConfig {
  /** Absent: the service starts an embedded PostgreSQL under `dataDir`. */
  databaseUrl?: string;
  databasePool: DatabasePoolConfig;
  migrationsRun: boolean;
  /** How long a migration waits for each lock (MIGRATION_LOCK_TIMEOUT_MS). */
  migrationLockTimeoutMs: number;
  dataDir: string;
  embeddedPostgresPort: number;
  production: boolean;
}

/** Everything the service reads from its environment, validated and typed. */
export interface AppConfig extends DatabaseConfig {
  host: string;
  port: number;
  apiKeys: string[];
  logLevel: LogLevel;
  /** Signs pagination cursors. Absent (development only): a random secret per process. */
  cursorSecret?: string;
  /** Production and staging base URLs listed as `servers` in the OpenAPI document; each ends in `/v1`. */
  publicBaseUrl: string;
  stagingBaseUrl: string;
  /**
   * After SIGTERM/SIGINT: how long the instance keeps serving (readiness 503, every response `Connection: close`)
   * so load balancers take it out before its listener closes. At least the balancer's check interval x fall count.
   */
  shutdownDrainDelayMs: number;
  /** How long in-flight requests may run after SIGTERM/SIGINT before the process exits anyway. */
  shutdownGraceMs: number;
  /**
   * Proxies whose `X-Forwarded-For` is believed (addresses, CIDR ranges or proxy-addr's names such as `loopback`);
   * empty: the peer's address is the client's.
   */
  trustProxy: string[];
  /** Absent: `/metrics` needs no credentials (keep the port private then). */
  metricsToken?: string;
  loadShedding: LoadSheddingConfig;
  /** Requests per minute per API key; 0 turns per-key limiting off. */
  rateLimitPerMinute: number;
  /** Failed authentications per minute per client address. */
  authFailureLimitPerMinute: number;
  /** Set: rate-limit counters live in this Redis, shared by every instance. */
  redisUrl?: string;
  edgeLimits: EdgeLimitsConfig;
}

function databaseConfigOf(e: DatabaseEnvironment): DatabaseConfig {
  const production = e.NODE_ENV === 'production';
  return {
    databaseUrl: e.DATABASE_URL,
    databasePool: { max: e.DATABASE_POOL_MAX, idleTimeoutMs: e.DATABASE_POOL_IDLE_TIMEOUT_MS },
    // In production the one-shot migrate step (compose `migrate`, the Kubernetes Job) applies them before a rollout.
    migrationsRun: e.MIGRATIONS_RUN ?? !production,
    migrationLockTimeoutMs: e.MIGRATION_LOCK_TIMEOUT_MS,
    dataDir: resolve(e.DATA_DIR),
    embeddedPostgresPort: e.EMBEDDED_POSTGRES_PORT,
    production,
  };
}

/** Validates the database part of `env` (src/config/environment.ts holds the rules): what the commands read. */
export function loadDatabaseConfig(env: Record<string, string | undefined> = process.env): DatabaseConfig {
  return databaseConfigOf(validateEnvironment(env, 'database'));
}

/** Validates `env` (src/config/environment.ts holds the rules) and gives it the service's typed shape. */
export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const e = validateEnvironment(env, 'service');
  const database = databaseConfigOf(e);
  return {
    host: e.HOST,
    port: e.PORT,
    ...database,
    apiKeys: e.API_KEYS,
    logLevel: e.LOG_LEVEL,
    cursorSecret: e.CURSOR_SECRET,
    publicBaseUrl: e.PUBLIC_BASE_URL.replace(/\/$/, ''),
    stagingBaseUrl: e.STAGING_BASE_URL.replace(/\/$/, ''),
    shutdownDrainDelayMs: e.SHUTDOWN_DRAIN_DELAY_MS ?? (database.production ? 5_000 : 0),
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    trustProxy: e.TRUST_PROXY,
    metricsToken: e.METRICS_TOKEN,
    loadShedding: {
      maxInFlight: e.LOAD_SHEDDING_MAX_IN_FLIGHT,
      maxEventLoopDelayMs: e.LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS,
      maxEventLoopUtilization: e.LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION,
    },
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    authFailureLimitPerMinute: e.AUTH_FAILURE_LIMIT_PER_MINUTE,
    redisUrl: e.REDIS_URL,
    edgeLimits: {
      headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.MAX_CONNECTIONS,
    },
  };
}

/** The `app` configuration namespace; its KEY is the injection token of the typed AppConfig. */
export const appConfig = registerAs('app', (): AppConfig => loadConfig(process.env));

const LOADERS = { service: loadConfig, database: loadDatabaseConfig } satisfies Record<EnvironmentPart, unknown>;

/**
 * Reads the part of the configuration an entry point uses, the way every entry point does (the service: `service`;
 * `apikey` and the migration commands: `database`): `ConfigModule.forRoot` loads `envFilePath`
 * (`.env` in the working directory) under the real environment, which wins, and refuses a bad value of that part
 * from either with a ConfigError naming the variable.
 */
export async function readConfig<P extends EnvironmentPart>(
  part: P,
  envFilePath = resolve('.env'),
): Promise<ReturnType<(typeof LOADERS)[P]>> {
  await NestConfigModule.forRoot({
    envFilePath,
    // Validated here, typed by the loader: the variables reach process.env as the strings they were.
    validate: (raw) => {
      validateEnvironment(raw, part);
      return raw;
    },
  });
  return LOADERS[part](process.env) as ReturnType<(typeof LOADERS)[P]>;
}
