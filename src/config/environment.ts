import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './problem.js';
import { PUBLISHED_EXAMPLE_SECRETS, SECRET_VARIABLES } from './published-secrets.js';

export { ConfigError, Problem } from './problem.js';

export const LOG_LEVELS = ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const CURSOR_SECRET_MIN_LENGTH = 32;

/**
 * The window both rate-limit budgets count in (what RATE_LIMIT_PER_MINUTE and AUTH_FAILURE_LIMIT_PER_MINUTE mean);
 * no Retry-After is longer.
 */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The largest RATE_LIMIT_PER_MINUTE and AUTH_FAILURE_LIMIT_PER_MINUTE accepted (the OpenAPI document's bound too). */
export const MAX_LIMIT_PER_MINUTE = 1_000_000;

/** The database pool's defaults (docs/operating.md, "Sizing the database pool"). */
export const DATABASE_POOL_DEFAULTS = { max: 10, idleTimeoutMs: 10_000 } as const;

const mustBe = (allowed: string) => (issue: { input?: unknown }) => `must be ${allowed}, got "${String(issue.input)}"`;

/** A whole decimal number from `min` to `max`: ` 80`, `1e3` and `80.5` are refused. */
const integer = (min: number, max: number) =>
  z
    .string()
    .refine((raw) => /^\d+$/.test(raw) && +raw >= min && +raw <= max, {
      error: mustBe(`an integer from ${min} to ${max}`),
    })
    .transform(Number);
const fraction = z
  .string()
  .regex(/^(0(\.\d+)?|1(\.0+)?)$/, { error: mustBe('a number from 0 to 1') })
  .transform(Number);
const trueOrFalse = z.stringbool({
  truthy: ['true'],
  falsy: ['false'],
  case: 'sensitive',
  error: mustBe('"true" or "false"'),
});

/** A URL with a scheme `protocol` matches; never echoed, it may hold a password. */
const urlWithScheme = (protocol: RegExp, schemes: string, example: string) =>
  z.url({
    protocol,
    error: ({ input }) =>
      URL.canParse(String(input)) ? `must start with ${schemes}` : `must be a URL such as ${example}`,
  });

/** A base URL of the OpenAPI document's `servers`: http(s), path ending in /v1, no query or fragment. */
const baseUrlEndingInV1 = (example: string) =>
  z
    .url({ error: mustBe(`a URL such as ${example}`), abort: true })
    .refine(
      (raw) => {
        const url = new URL(raw);
        return ['http:', 'https:'].includes(url.protocol) && /\/v1\/?$/.test(url.pathname) && !url.search && !url.hash;
      },
      { error: mustBe('an http(s) URL ending in /v1') },
    )
    .transform((raw) => raw.replace(/\/$/, ''));

/** The rule of every comma-separated variable: entries trimmed, empty ones dropped. */
export const commaList = (raw: string): string[] =>
  raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

/** A comma-separated list whose entries `entry` accepts; the first it refuses, and where, is said by `refusal`. */
const list = (entry: z.ZodType, refusal: (invalid: string, index: number) => string) =>
  z.string().transform((raw, context) => {
    const entries = commaList(raw);
    const index = entries.findIndex((value) => !entry.safeParse(value).success);
    if (index === -1) return entries;
    context.addIssue({ code: 'custom', message: refusal(entries[index], index) });
    return z.NEVER;
  });

const TOKEN_RULE = '16 to 512 printable characters without spaces';
const token = z.string().regex(/^[\x21-\x7e]{16,512}$/, { error: `must be ${TOKEN_RULE}` });
/** Keys are named by their position, never shown. */
const keyList = list(token, (_key, index) => `entry ${index + 1} must be ${TOKEN_RULE}`);

// Each entry as proxy-addr (Fastify's trustProxy) parses it; `true` or a hop count would trust forged headers.
const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'] as const;
const proxyList = list(
  z.union([z.enum(PROXY_NAMES), z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()]),
  (invalid) =>
    `must list proxy addresses or CIDR ranges (or ${PROXY_NAMES.join(', ')}), comma-separated; "${invalid}" is none of these`,
);

/** An origin as a browser sends it in `Origin`: http(s), host, a port only when not the scheme's default. */
const origin = z.url({ protocol: /^https?$/, abort: true }).refine((entry) => new URL(entry).origin === entry);
const originList = list(
  z.union([z.literal('*'), origin]),
  (invalid) =>
    `entry "${invalid}" is not an origin: write scheme://host[:port] in lower case, with no path and no trailing slash (e.g. https://shop.example), or *`,
);
/** Hosts that never leave the machine: the only ones a production CORS_ORIGINS may reach over plain http. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Whether a browser would reach this origin over plain http on another machine (the credentials readable on the way). */
const isRemotePlainHttp = (entry: string): boolean =>
  entry.startsWith('http://') && !LOOPBACK_HOSTS.has(new URL(entry).hostname);

/**
 * What every command that opens the database reads (the migration and key commands, and the service). Those
 * commands validate this part alone, so that they run with DATABASE_URL only. Unset and empty are the same.
 */
const DATABASE_VARIABLES = {
  /** `postgres://` URL of the database. Absent: the service starts an embedded PostgreSQL under `DATA_DIR`. */
  DATABASE_URL: urlWithScheme(
    /^postgres(ql)?$/,
    'postgres:// or postgresql://',
    'postgres://user:password@host:5432/db',
  ).optional(),
  /** Connections each instance may open to the database. */
  DATABASE_POOL_MAX: integer(1, 10_000).default(DATABASE_POOL_DEFAULTS.max),
  /** How long a pooled connection may stay idle before it is closed (0: never). */
  DATABASE_POOL_IDLE_TIMEOUT_MS: integer(0, 3_600_000).default(DATABASE_POOL_DEFAULTS.idleTimeoutMs),
  /** Apply pending migrations at start. Unset: true, but false in production, where the one-shot migrate step applies them. */
  MIGRATIONS_RUN: trueOrFalse.optional(),
  /**
   * How long a migration waits for each lock before it gives up. Requests on a table queue behind a migration
   * waiting for it; below the requests' statement timeout they are delayed, not failed.
   */
  MIGRATION_LOCK_TIMEOUT_MS: integer(1, 600_000).default(3_000),
  /** The embedded PostgreSQL's cluster, its password and the development key; relative to the working directory. */
  DATA_DIR: z
    .string()
    .prefault('.data')
    .transform((raw) => resolve(raw)),
  EMBEDDED_POSTGRES_PORT: integer(1, 65535).default(5433),
  NODE_ENV: z.string().optional(),
};

/** The service reads every variable: its own and the database part. */
const SERVICE_VARIABLES = {
  HOST: z.string().default('127.0.0.1'),
  PORT: integer(0, 65535).default(3000),
  ...DATABASE_VARIABLES,
  /** Comma-separated keys accepted beside the issued ones. */
  API_KEYS: keyList.default([]),
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: mustBe(`one of ${LOG_LEVELS.join(', ')}`) }).default('info'),
  /** Signs pagination cursors; required in production. Absent (development only): a random secret per process. */
  CURSOR_SECRET: z
    .string()
    .min(CURSOR_SECRET_MIN_LENGTH, { error: `must be at least ${CURSOR_SECRET_MIN_LENGTH} characters` })
    .optional(),
  /** Production and staging base URLs listed as `servers` in the OpenAPI document; each ends in `/v1`. */
  PUBLIC_BASE_URL: baseUrlEndingInV1('https://api.example.com/v1').default('https://api.example.com/v1'),
  STAGING_BASE_URL: baseUrlEndingInV1('https://staging-api.example.com/v1').default(
    'https://staging-api.example.com/v1',
  ),
  /**
   * After SIGTERM/SIGINT: how long the instance keeps serving (readiness 503, every response `Connection: close`)
   * so load balancers take it out before its listener closes. Unset: 5000 in production, 0 otherwise.
   */
  SHUTDOWN_DRAIN_DELAY_MS: integer(0, 600_000).optional(),
  /** How long in-flight requests may run after SIGTERM/SIGINT before the process exits anyway. */
  SHUTDOWN_GRACE_MS: integer(0, 600_000).default(10_000),
  /**
   * How long an instance that cannot reach the database stays ready (each instance up to a fifth longer), and how
   * long the database must then answer before a new outage gets the grace again.
   */
  READINESS_OUTAGE_GRACE_MS: integer(0, 600_000).default(30_000),
  /** Proxies whose `X-Forwarded-For` is believed; empty: the peer's address is the client's. */
  TRUST_PROXY: proxyList.default([]),
  /**
   * Origins whose browser pages may call the API (CORS), exactly as browsers send `Origin`; `*`: any origin.
   * Empty: no cross-origin access at all (src/edge/cors.ts).
   */
  CORS_ORIGINS: originList.default([]),
  /** Absent: `/metrics` needs no credentials (keep the port private then). */
  METRICS_TOKEN: token.optional(),
  /** Load shedding: requests being served at once; past it, new ones are refused rather than queued (0: off). */
  LOAD_SHEDDING_MAX_IN_FLIGHT: integer(0, 100_000).default(256),
  LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: integer(0, 60_000).default(1000),
  /** 0 to 1: the share of time the event loop was busy over the last sample (0: off). */
  LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION: fraction.default(0),
  /** Requests per minute per API key; 0 turns per-key limiting off. */
  RATE_LIMIT_PER_MINUTE: integer(0, MAX_LIMIT_PER_MINUTE).default(600),
  /** Failed authentications per minute per client address. */
  AUTH_FAILURE_LIMIT_PER_MINUTE: integer(1, MAX_LIMIT_PER_MINUTE).default(30),
  /** Set: rate-limit counters live in this Redis, shared by every instance. */
  REDIS_URL: urlWithScheme(/^rediss?$/, 'redis:// or rediss://', 'redis://127.0.0.1:6379').optional(),
  /** From a request's first byte until its headers are complete; past it: 408 and the connection closed. */
  HEADERS_TIMEOUT_MS: integer(1000, 600_000).default(10_000),
  /** From a request's first byte until its body is complete (at least HEADERS_TIMEOUT_MS); past it: 408 and closed. */
  REQUEST_TIMEOUT_MS: integer(1000, 600_000).default(30_000),
  /** How long an idle kept-alive connection stays open; above the load balancer's idle timeout. */
  KEEP_ALIVE_TIMEOUT_MS: integer(1000, 3_600_000).default(72_000),
  /** Open connections per instance; past it, new ones are closed at once without an answer. */
  MAX_CONNECTIONS: integer(1, 1_000_000).default(4096),
};

type Variables<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

/** The database part, typed: MIGRATIONS_RUN settled from NODE_ENV. */
const databaseConfig = (env: Variables<typeof DATABASE_VARIABLES>) => {
  const production = env.NODE_ENV === 'production';
  return {
    databaseUrl: env.DATABASE_URL,
    databasePool: { max: env.DATABASE_POOL_MAX, idleTimeoutMs: env.DATABASE_POOL_IDLE_TIMEOUT_MS },
    migrationsRun: env.MIGRATIONS_RUN ?? !production,
    migrationLockTimeoutMs: env.MIGRATION_LOCK_TIMEOUT_MS,
    dataDir: env.DATA_DIR,
    embeddedPostgresPort: env.EMBEDDED_POSTGRES_PORT,
    production,
  };
};

/** The variables each entry point validates (the service all of them, the database commands their part), typed. */
const SCHEMAS = {
  database: z.object(DATABASE_VARIABLES).transform(databaseConfig),
  service: z
    .object(SERVICE_VARIABLES)
    .superRefine((env, context) => {
      const refuse = (name: string, message: string) => context.addIssue({ code: 'custom', path: [name], message });
      if (env.REQUEST_TIMEOUT_MS < env.HEADERS_TIMEOUT_MS) {
        refuse('REQUEST_TIMEOUT_MS', `must be at least HEADERS_TIMEOUT_MS, got "${env.REQUEST_TIMEOUT_MS}"`);
      } else if (env.NODE_ENV === 'production') {
        // A page on a remote plain-http origin holds its key where anyone on the way can read and change it.
        const plainHttp = env.CORS_ORIGINS.find(isRemotePlainHttp);
        if (plainHttp !== undefined) {
          refuse(
            'CORS_ORIGINS',
            `entry "${plainHttp}" is plain http on a remote host, refused when NODE_ENV=production: serve that page over https`,
          );
        } else if (env.CURSOR_SECRET === undefined) {
          // Every instance behind a load balancer must verify the cursors the others sign: no per-process secret.
          refuse('CURSOR_SECRET', 'is required when NODE_ENV=production (the same value on every instance)');
        }
      }
    })
    .transform((env) => {
      const database = databaseConfig(env);
      return {
        host: env.HOST,
        port: env.PORT,
        ...database,
        apiKeys: env.API_KEYS,
        logLevel: env.LOG_LEVEL,
        cursorSecret: env.CURSOR_SECRET,
        publicBaseUrl: env.PUBLIC_BASE_URL,
        stagingBaseUrl: env.STAGING_BASE_URL,
        shutdownDrainDelayMs: env.SHUTDOWN_DRAIN_DELAY_MS ?? (database.production ? 5_000 : 0),
        shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
        readinessOutageGraceMs: env.READINESS_OUTAGE_GRACE_MS,
        trustProxy: env.TRUST_PROXY,
        corsOrigins: env.CORS_ORIGINS,
        metricsToken: env.METRICS_TOKEN,
        loadShedding: {
          maxInFlight: env.LOAD_SHEDDING_MAX_IN_FLIGHT,
          maxEventLoopDelayMs: env.LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS,
          maxEventLoopUtilization: env.LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION,
        },
        rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
        authFailureLimitPerMinute: env.AUTH_FAILURE_LIMIT_PER_MINUTE,
        redisUrl: env.REDIS_URL,
        edgeLimits: {
          headersTimeoutMs: env.HEADERS_TIMEOUT_MS,
          requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
          keepAliveTimeoutMs: env.KEEP_ALIVE_TIMEOUT_MS,
          maxConnections: env.MAX_CONNECTIONS,
        },
      };
    }),
};
export type EnvironmentPart = keyof typeof SCHEMAS;

/** Every variable the service reads, in declaration order. */
export const VARIABLES: readonly string[] = Object.keys(SERVICE_VARIABLES);

/** What the commands that open the database read, validated and typed. */
export type DatabaseConfig = z.output<typeof SCHEMAS.database>;
/** Everything the service reads from its environment, validated and typed. */
export type AppConfig = z.output<typeof SCHEMAS.service>;
export type DatabasePoolConfig = AppConfig['databasePool'];
export type LoadSheddingConfig = AppConfig['loadShedding'];
export type EdgeLimitsConfig = AppConfig['edgeLimits'];

type Env = Record<string, string | undefined>;

/** The first secret variable of `set` holding a published example, and what to do instead; never the value. */
function publishedSecretProblem(set: Env): string | null {
  for (const [name, instead] of Object.entries(SECRET_VARIABLES)) {
    const value = set[name] ?? '';
    const index = (name === 'API_KEYS' ? commaList(value) : [value.trim()]).findIndex((entry) =>
      PUBLISHED_EXAMPLE_SECRETS.has(entry),
    );
    if (index === -1) continue;
    const variable = name === 'API_KEYS' ? `API_KEYS entry ${index + 1}` : name;
    return `${variable} is an example value published with this service, refused when NODE_ENV=production: ${instead}`;
  }
  return null;
}

/**
 * Validates the variables of `raw` a part reads and gives them its typed shape, or throws a ConfigError whose one
 * line names the first bad variable and says what is allowed. Other variables (PATH, TEST_DATABASE_URL …) pass
 * unchecked. Whatever the part, production refuses a secret this repository publishes as an example.
 */
function parseEnvironment<P extends EnvironmentPart>(part: P, raw: Env): z.output<(typeof SCHEMAS)[P]> {
  const set = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined && value !== ''));
  const published = set.NODE_ENV === 'production' ? publishedSecretProblem(set) : null;
  if (published) throw new ConfigError(published);
  const parsed = SCHEMAS[part].safeParse(set);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    throw new ConfigError(`${String(issue.path[0])} ${issue.message}`);
  }
  return parsed.data as z.output<(typeof SCHEMAS)[P]>;
}

/** The database part of `env`: what the migration and key commands validate. */
export const loadDatabaseConfig = (env: Env = process.env): DatabaseConfig => parseEnvironment('database', env);

/** All of `env`, as the service reads it; the rules between variables are checked once each one is valid. */
export const loadConfig = (env: Env = process.env): AppConfig => parseEnvironment('service', env);
