import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import { PUBLISHED_EXAMPLE_SECRETS, SECRET_VARIABLES } from './published-secrets.js';

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

export class ConfigError extends Error {}

/** What a rule says of a value it refuses: what is allowed, without the variable's name (put in front of it). */
class Refusal {
  constructor(readonly message: string) {}
}
const mustBe = (allowed: string, raw: string) => new Refusal(`must be ${allowed}, got "${raw}"`);

/** A variable's rule: its raw string to its typed value, or a Refusal. */
function rule<T>(parse: (raw: string) => T | Refusal) {
  return z.string().transform((raw, context) => {
    const value = parse(raw);
    if (!(value instanceof Refusal)) return value;
    context.addIssue({ code: 'custom', message: value.message });
    return z.NEVER;
  });
}

/** A whole decimal number from `min` to `max`: ` 80`, `1e3` and `80.5` are refused. */
const integer = (min: number, max: number) =>
  rule((raw) =>
    /^\d+$/.test(raw) && +raw >= min && +raw <= max ? +raw : mustBe(`an integer from ${min} to ${max}`, raw),
  );
const fraction = rule((raw) => (/^(0(\.\d+)?|1(\.0+)?)$/.test(raw) ? +raw : mustBe('a number from 0 to 1', raw)));
const trueOrFalse = rule((raw) => raw === 'true' || (raw === 'false' ? false : mustBe('"true" or "false"', raw)));
const oneOf = <T extends string>(values: readonly T[]) =>
  rule((raw) => (values.includes(raw as T) ? (raw as T) : mustBe(`one of ${values.join(', ')}`, raw)));

const urlOf = (raw: string) => (URL.canParse(raw) ? new URL(raw) : null);

/** A URL with one of `protocols` (as `URL.protocol` gives them); never echoed, it may hold a password. */
const urlWithScheme = (protocols: [string, string], example: string) =>
  rule((raw) => {
    const protocol = urlOf(raw)?.protocol;
    if (protocol === undefined) return new Refusal(`must be a URL such as ${example}`);
    return protocols.includes(protocol) ? raw : new Refusal(`must start with ${protocols.join('// or ')}//`);
  });

/** A base URL of the OpenAPI document's `servers`: http(s), path ending in /v1, no query or fragment. */
const baseUrlEndingInV1 = (example: string) =>
  rule((raw) => {
    const url = urlOf(raw);
    if (url === null) return mustBe(`a URL such as ${example}`, raw);
    const fits =
      ['http:', 'https:'].includes(url.protocol) && /\/v1\/?$/.test(url.pathname) && !url.search && !url.hash;
    return fits ? raw.replace(/\/$/, '') : mustBe('an http(s) URL ending in /v1', raw);
  });

/** The rule of every comma-separated variable: entries trimmed, empty ones dropped. */
export const commaList = (raw: string): string[] =>
  raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

const TOKEN = /^[\x21-\x7e]{16,512}$/;
const TOKEN_RULE = '16 to 512 printable characters without spaces';
const token = rule((raw) => (TOKEN.test(raw) ? raw : new Refusal(`must be ${TOKEN_RULE}`)));

/** Keys are named by their position, never shown. */
const keyList = rule((raw) => {
  const keys = commaList(raw);
  const invalid = keys.findIndex((key) => !TOKEN.test(key));
  return invalid === -1 ? keys : new Refusal(`entry ${invalid + 1} must be ${TOKEN_RULE}`);
});

// Each entry as proxy-addr (Fastify's trustProxy) parses it; `true` or a hop count would trust forged headers.
const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
function isAddressOrRange(entry: string): boolean {
  const [address, bits, extra] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128));
}
const proxyList = rule((raw) => {
  const entries = commaList(raw);
  const invalid = entries.find((entry) => !PROXY_NAMES.includes(entry) && !isAddressOrRange(entry));
  return invalid === undefined
    ? entries
    : new Refusal(
        `must list proxy addresses or CIDR ranges (or ${PROXY_NAMES.join(', ')}), comma-separated; "${invalid}" is none of these`,
      );
});

/** An origin as a browser sends it in `Origin`: http(s), host, a port only when not the scheme's default. */
const isOrigin = (entry: string): boolean => {
  const url = urlOf(entry);
  return url !== null && ['http:', 'https:'].includes(url.protocol) && url.origin === entry;
};
/** Hosts that never leave the machine: the only ones a production CORS_ORIGINS may reach over plain http. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Whether a browser would reach this origin over plain http on another machine (the credentials readable on the way). */
export const isRemotePlainHttp = (origin: string): boolean =>
  origin.startsWith('http://') && !LOOPBACK_HOSTS.has(new URL(origin).hostname);
const originList = rule((raw) => {
  const entries = commaList(raw);
  const invalid = entries.find((entry) => entry !== '*' && !isOrigin(entry));
  return invalid === undefined
    ? entries
    : new Refusal(
        `entry "${invalid}" is not an origin: write scheme://host[:port] in lower case, with no path and no trailing slash (e.g. https://shop.example), or *`,
      );
});

/** One environment variable: its name, and its rule with its default; unset and empty are the same. */
class Variable<S extends z.ZodType = z.ZodType> {
  constructor(
    readonly name: string,
    readonly schema: S,
  ) {}
}
const env = <S extends z.ZodType>(name: string, schema: S) => new Variable(name, schema);
type Declaration = { readonly [key: string]: Variable | Declaration };
/** The typed configuration a declaration gives: its shape, each variable's value where it is declared. */
export type ConfigOf<D> = { -readonly [K in keyof D]: D[K] extends Variable<infer S> ? z.output<S> : ConfigOf<D[K]> };

/**
 * What every command that opens the database reads (the migration and key commands, and the service). Those
 * commands validate this part alone, so that they run with DATABASE_URL only.
 */
const DATABASE = {
  /** `postgres://` URL of the database. Absent: the service starts an embedded PostgreSQL under `dataDir`. */
  databaseUrl: env(
    'DATABASE_URL',
    urlWithScheme(['postgres:', 'postgresql:'], 'postgres://user:password@host:5432/db').optional(),
  ),
  databasePool: {
    /** Connections each instance may open to the database. */
    max: env('DATABASE_POOL_MAX', integer(1, 10_000).default(DATABASE_POOL_DEFAULTS.max)),
    /** How long a pooled connection may stay idle before it is closed (0: never). */
    idleTimeoutMs: env(
      'DATABASE_POOL_IDLE_TIMEOUT_MS',
      integer(0, 3_600_000).default(DATABASE_POOL_DEFAULTS.idleTimeoutMs),
    ),
  },
  /** Apply pending migrations at start (unset: settleMigrationsRun). */
  migrationsRun: env('MIGRATIONS_RUN', trueOrFalse.optional()),
  /**
   * How long a migration waits for each lock before it gives up. Requests on a table queue behind a migration
   * waiting for it; below the requests' statement timeout they are delayed, not failed.
   */
  migrationLockTimeoutMs: env('MIGRATION_LOCK_TIMEOUT_MS', integer(1, 600_000).default(3_000)),
  /** The embedded PostgreSQL's cluster, its password and the development key; relative to the working directory. */
  dataDir: env('DATA_DIR', rule((raw) => resolve(raw)).prefault('.data')),
  embeddedPostgresPort: env('EMBEDDED_POSTGRES_PORT', integer(1, 65535).default(5433)),
  /** NODE_ENV=production. */
  production: env('NODE_ENV', rule((raw) => raw === 'production').default(false)),
};

/** The service reads every variable: its own and the database part. */
const SERVICE = {
  host: env('HOST', z.string().default('127.0.0.1')),
  port: env('PORT', integer(0, 65535).default(3000)),
  ...DATABASE,
  /** Comma-separated keys accepted beside the issued ones. */
  apiKeys: env('API_KEYS', keyList.default([])),
  logLevel: env('LOG_LEVEL', oneOf(LOG_LEVELS).default('info')),
  /** Signs pagination cursors; required in production. Absent (development only): a random secret per process. */
  cursorSecret: env(
    'CURSOR_SECRET',
    rule((raw) =>
      raw.length >= CURSOR_SECRET_MIN_LENGTH
        ? raw
        : new Refusal(`must be at least ${CURSOR_SECRET_MIN_LENGTH} characters`),
    ).optional(),
  ),
  /** Production and staging base URLs listed as `servers` in the OpenAPI document; each ends in `/v1`. */
  publicBaseUrl: env(
    'PUBLIC_BASE_URL',
    baseUrlEndingInV1('https://api.example.com/v1').default('https://api.example.com/v1'),
  ),
  stagingBaseUrl: env(
    'STAGING_BASE_URL',
    baseUrlEndingInV1('https://staging-api.example.com/v1').default('https://staging-api.example.com/v1'),
  ),
  /**
   * After SIGTERM/SIGINT: how long the instance keeps serving (readiness 503, every response `Connection: close`)
   * so load balancers take it out before its listener closes. Unset: 5000 in production, 0 otherwise.
   */
  shutdownDrainDelayMs: env('SHUTDOWN_DRAIN_DELAY_MS', integer(0, 600_000).optional()),
  /** How long in-flight requests may run after SIGTERM/SIGINT before the process exits anyway. */
  shutdownGraceMs: env('SHUTDOWN_GRACE_MS', integer(0, 600_000).default(10_000)),
  /**
   * How long an instance that cannot reach the database stays ready (each instance up to a fifth longer), and how
   * long the database must then answer before a new outage gets the grace again.
   */
  readinessOutageGraceMs: env('READINESS_OUTAGE_GRACE_MS', integer(0, 600_000).default(30_000)),
  /** Proxies whose `X-Forwarded-For` is believed; empty: the peer's address is the client's. */
  trustProxy: env('TRUST_PROXY', proxyList.default([])),
  /**
   * Origins whose browser pages may call the API (CORS), exactly as browsers send `Origin`; `*`: any origin.
   * Empty: no cross-origin access at all (src/edge/cors.ts).
   */
  corsOrigins: env('CORS_ORIGINS', originList.default([])),
  /** Absent: `/metrics` needs no credentials (keep the port private then). */
  metricsToken: env('METRICS_TOKEN', token.optional()),
  /** Thresholds past which requests are shed with 503; 0 turns one off. */
  loadShedding: {
    /** Requests being served at once; past it, new ones are refused rather than queued. */
    maxInFlight: env('LOAD_SHEDDING_MAX_IN_FLIGHT', integer(0, 100_000).default(256)),
    maxEventLoopDelayMs: env('LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS', integer(0, 60_000).default(1000)),
    /** 0 to 1: the share of time the event loop was busy over the last sample. */
    maxEventLoopUtilization: env('LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION', fraction.default(0)),
  },
  /** Requests per minute per API key; 0 turns per-key limiting off. */
  rateLimitPerMinute: env('RATE_LIMIT_PER_MINUTE', integer(0, MAX_LIMIT_PER_MINUTE).default(600)),
  /** Failed authentications per minute per client address. */
  authFailureLimitPerMinute: env('AUTH_FAILURE_LIMIT_PER_MINUTE', integer(1, MAX_LIMIT_PER_MINUTE).default(30)),
  /** Set: rate-limit counters live in this Redis, shared by every instance. */
  redisUrl: env('REDIS_URL', urlWithScheme(['redis:', 'rediss:'], 'redis://127.0.0.1:6379').optional()),
  /** The HTTP edge's bounds on a client's time and on the connections an instance holds (docs/operating.md). */
  edgeLimits: {
    /** From a request's first byte until its headers are complete; past it: 408 and the connection closed. */
    headersTimeoutMs: env('HEADERS_TIMEOUT_MS', integer(1000, 600_000).default(10_000)),
    /** From a request's first byte until its body is complete (at least headersTimeoutMs); past it: 408 and closed. */
    requestTimeoutMs: env('REQUEST_TIMEOUT_MS', integer(1000, 600_000).default(30_000)),
    /** How long an idle kept-alive connection stays open; above the load balancer's idle timeout. */
    keepAliveTimeoutMs: env('KEEP_ALIVE_TIMEOUT_MS', integer(1000, 3_600_000).default(72_000)),
    /** Open connections per instance; past it, new ones are closed at once without an answer. */
    maxConnections: env('MAX_CONNECTIONS', integer(1, 1_000_000).default(4096)),
  },
};

/** The parts an entry point can read: the service all of it, the commands that open the database their part. */
export const DECLARATIONS = { database: DATABASE, service: SERVICE } as const;
export type EnvironmentPart = keyof typeof DECLARATIONS;

const variablesOf = (declaration: Declaration): Variable[] =>
  Object.values(declaration).flatMap((entry) => (entry instanceof Variable ? [entry] : variablesOf(entry)));

/** Every variable the service reads, in declaration order. */
export const VARIABLES: readonly string[] = variablesOf(SERVICE).map(({ name }) => name);

const shapeOf = (declaration: Declaration, values: Record<string, unknown>): object =>
  Object.fromEntries(
    Object.entries(declaration).map(([key, entry]) => [
      key,
      entry instanceof Variable ? values[entry.name] : shapeOf(entry, values),
    ]),
  );

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
 * Validates the variables of `raw` a part declares and gives them its typed shape, or throws a ConfigError whose one
 * line names the first bad variable and says what is allowed. Other variables (PATH, TEST_DATABASE_URL …) pass
 * unchecked. Whatever the part, production refuses a secret this repository publishes as an example.
 */
function parseEnvironment<P extends EnvironmentPart>(part: P, raw: Env): ConfigOf<(typeof DECLARATIONS)[P]> {
  const set = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined && value !== ''));
  const published = set.NODE_ENV === 'production' ? publishedSecretProblem(set) : null;
  if (published) throw new ConfigError(published);
  const declaration: Declaration = DECLARATIONS[part];
  const schema = z.object(Object.fromEntries(variablesOf(declaration).map(({ name, schema }) => [name, schema])));
  const parsed = schema.safeParse(set);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    throw new ConfigError(`${String(issue.path[0])} ${issue.message}`);
  }
  return shapeOf(declaration, parsed.data) as ConfigOf<(typeof DECLARATIONS)[P]>;
}

/** Variables whose default depends on NODE_ENV: always set once read. */
type Settled<T, K extends keyof T> = Omit<T, K> & { [V in K]-?: NonNullable<T[V]> };
/** What the commands that open the database read, validated and typed. */
export type DatabaseConfig = Settled<ConfigOf<typeof DATABASE>, 'migrationsRun'>;
/** Everything the service reads from its environment, validated and typed. */
export type AppConfig = Settled<ConfigOf<typeof SERVICE>, 'migrationsRun' | 'shutdownDrainDelayMs'>;
export type DatabasePoolConfig = AppConfig['databasePool'];
export type LoadSheddingConfig = AppConfig['loadShedding'];
export type EdgeLimitsConfig = AppConfig['edgeLimits'];

/** MIGRATIONS_RUN unset: true, but false in production, where the one-shot migrate step applies them. */
const settleMigrationsRun = <C extends ConfigOf<typeof DATABASE>>(config: C) => ({
  ...config,
  migrationsRun: config.migrationsRun ?? !config.production,
});

/** The database part of `env`: what the migration and key commands validate. */
export function loadDatabaseConfig(env: Env = process.env): DatabaseConfig {
  return settleMigrationsRun(parseEnvironment('database', env));
}

/** All of `env`, as the service reads it; the rules between variables are checked once each one is valid. */
export function loadConfig(env: Env = process.env): AppConfig {
  const config = parseEnvironment('service', env);
  const { production, edgeLimits } = config;
  if (edgeLimits.requestTimeoutMs < edgeLimits.headersTimeoutMs) {
    throw new ConfigError(
      `REQUEST_TIMEOUT_MS must be at least HEADERS_TIMEOUT_MS, got "${edgeLimits.requestTimeoutMs}"`,
    );
  }
  // A page on a remote plain-http origin holds its key where anyone on the way can read and change it.
  const plainHttp = production ? config.corsOrigins.find(isRemotePlainHttp) : undefined;
  if (plainHttp !== undefined) {
    throw new ConfigError(
      `CORS_ORIGINS entry "${plainHttp}" is plain http on a remote host, refused when NODE_ENV=production: serve that page over https`,
    );
  }
  // Every instance behind a load balancer must verify the cursors the others sign: no per-process secret there.
  if (production && config.cursorSecret === undefined) {
    throw new ConfigError('CURSOR_SECRET is required when NODE_ENV=production (the same value on every instance)');
  }
  return {
    ...settleMigrationsRun(config),
    shutdownDrainDelayMs: config.shutdownDrainDelayMs ?? (production ? 5_000 : 0),
  };
}
