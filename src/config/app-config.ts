// The environment the service and its commands read, as one zod schema; docs/operating.md describes each variable.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { ConfigError } from './problem.js';
import { PUBLISHED_EXAMPLE_SECRETS, SECRET_VARIABLES } from './published-secrets.js';

/** The window both rate-limit budgets count in; no Retry-After is longer. */
export const RATE_LIMIT_WINDOW_MS = 60_000;
/** The largest RATE_LIMIT_PER_MINUTE and AUTH_FAILURE_LIMIT_PER_MINUTE (the OpenAPI document's bound too). */
export const MAX_LIMIT_PER_MINUTE = 1_000_000;
export const DATABASE_POOL_DEFAULTS = { max: 10, idleTimeoutMs: 10_000 };

const mustBe = (allowed: string) => (issue: { input?: unknown }) => `must be ${allowed}, got "${String(issue.input)}"`;

const integer = (min: number, max: number) =>
  z
    .string()
    .refine((raw) => /^\d+$/.test(raw) && +raw >= min && +raw <= max, {
      error: mustBe(`an integer from ${min} to ${max}`),
    })
    .transform(Number);
const flag = z.stringbool({
  truthy: ['true'],
  falsy: ['false'],
  case: 'sensitive',
  error: mustBe('"true" or "false"'),
});
const fraction = z
  .string()
  .regex(/^(0(\.\d+)?|1(\.0+)?)$/, { error: mustBe('a number from 0 to 1') })
  .transform(Number);

/** A URL of one of `schemes`, never echoed: it may hold a password. */
const urlWithScheme = (schemes: string[], example: string) =>
  z.url({
    protocol: new RegExp(`^(${schemes.join('|')})$`),
    error: ({ input }) =>
      URL.canParse(String(input))
        ? `must start with ${schemes.map((scheme) => `${scheme}://`).join(' or ')}`
        : `must be a URL such as ${example}`,
  });

const endsInV1 = ({ protocol, pathname, search, hash }: URL) =>
  ['http:', 'https:'].includes(protocol) && /\/v1\/?$/.test(pathname) && !search && !hash;
/** A `servers` base URL of the OpenAPI document, kept without its trailing slash. */
const baseUrlEndingInV1 = (example: string) =>
  z
    .url({ error: mustBe(`a URL such as ${example}`), abort: true })
    .refine((raw) => endsInV1(new URL(raw)), { error: mustBe('an http(s) URL ending in /v1') })
    .transform((raw) => raw.replace(/\/$/, ''))
    .default(example);

export const commaList = (raw: string): string[] =>
  raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');

const list = <T>(entry: z.ZodType<T, string>) => z.string().transform(commaList).pipe(z.array(entry)).default([]);

const TOKEN = /^[\x21-\x7e]{16,512}$/;
const TOKEN_RULE = '16 to 512 printable characters without spaces';
/** An API_KEYS entry `name:key`: the name, not the position, identifies the key (logs, rate limits, Idempotency-Keys). */
const NAMED_KEY = /^([a-z][a-z0-9-]{0,31}):(.*)$/;
const keyOfEntry = (entry: string) => NAMED_KEY.exec(entry)?.[2] ?? entry;
const apiKeyEntries = list(
  z.string().refine((entry) => TOKEN.test(keyOfEntry(entry)), {
    error: ({ path = [] }) => `entry ${Number(path[1]) + 1} must be ${TOKEN_RULE}, optionally after a name and a colon`,
  }),
)
  .transform((entries) =>
    entries.map((entry, index) => {
      const name = NAMED_KEY.exec(entry)?.[1];
      return { id: `env-${name ?? index + 1}`, name: `API_KEYS ${name ?? `#${index + 1}`}`, key: keyOfEntry(entry) };
    }),
  )
  .refine((keys) => new Set(keys.map(({ id }) => id)).size === keys.length, {
    error: 'names two entries alike: give each its own name',
  });
// As proxy-addr (Fastify's trustProxy) reads them; `true` or a hop count would trust forged headers.
const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'] as const;
const notAnOrigin = ({ input }: { input?: unknown }) =>
  `entry "${String(input)}" is not an origin: write scheme://host[:port] in lower case, with no path and no trailing slash (e.g. https://shop.example), or *`;
// A browser's Origin is compared as a string: `https://*.example.com` would match no page.
const wildcardOrigin = ({ input }: { input?: unknown }) =>
  `entry "${String(input)}" has a wildcard, but origins are exact: list each one (e.g. https://shop.example), or give * alone for any origin`;
const origin = z
  .url({ protocol: /^https?$/, abort: true })
  .refine((url) => new URL(url).origin === url, { error: notAnOrigin });

/** DATABASE_URL unset: the embedded PostgreSQL is `dev/`'s (it sets DATABASE_URL), never the service's. */
const NO_DATABASE_URL =
  'is not set: set it to your PostgreSQL, or run `npm start` (or `npm run apikey`, `npm run migration:*`), which starts an embedded one for development';

/** What the migration and key commands validate alone, so that they run with DATABASE_URL only. */
const DATABASE_VARIABLES = {
  DATABASE_URL: z
    .string({ error: NO_DATABASE_URL })
    .pipe(urlWithScheme(['postgres', 'postgresql'], 'postgres://user:password@host:5432/db')),
  DATABASE_POOL_MAX: integer(1, 10_000).default(DATABASE_POOL_DEFAULTS.max),
  DATABASE_POOL_IDLE_TIMEOUT_MS: integer(0, 3_600_000).default(DATABASE_POOL_DEFAULTS.idleTimeoutMs),
  MIGRATIONS_RUN: flag.optional(),
  MIGRATION_LOCK_TIMEOUT_MS: integer(1, 600_000).default(3_000),
  NODE_ENV: z.string().optional(),
};

const LOG_LEVELS = ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
const SERVICE_VARIABLES = {
  HOST: z.string().default('127.0.0.1'),
  PORT: integer(0, 65535).default(3000),
  ...DATABASE_VARIABLES,
  DATABASE_REPLICA_URL: list(urlWithScheme(['postgres', 'postgresql'], 'postgres://user:password@replica:5432/db')),
  DATABASE_REPLICA_MAX_LAG_MS: integer(0, 3_600_000).default(5_000),
  DATABASE_PREPARED_STATEMENTS: flag.default(true),
  API_KEYS: apiKeyEntries,
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: mustBe(`one of ${LOG_LEVELS.join(', ')}`) }).default('info'),
  CURSOR_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  PUBLIC_BASE_URL: baseUrlEndingInV1('https://api.example.com/v1'),
  STAGING_BASE_URL: baseUrlEndingInV1('https://staging-api.example.com/v1'),
  SHUTDOWN_DRAIN_DELAY_MS: integer(0, 600_000).optional(),
  SHUTDOWN_GRACE_MS: integer(0, 600_000).default(10_000),
  READINESS_OUTAGE_GRACE_MS: integer(0, 600_000).default(30_000),
  READINESS_RECOVERY_MS: integer(0, 600_000).default(10_000),
  TRUST_PROXY: list(
    z.union([z.enum(PROXY_NAMES), z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()], {
      error: ({ input }) =>
        `must list proxy addresses or CIDR ranges (or ${PROXY_NAMES.join(', ')}), comma-separated; "${String(input)}" is none of these`,
    }),
  ),
  CORS_ORIGINS: list(
    z
      .string()
      .refine((entry) => entry === '*' || !entry.includes('*'), { error: wildcardOrigin })
      .pipe(z.union([z.literal('*'), origin], { error: notAnOrigin })),
  ).refine((entries) => entries.length === 1 || !entries.includes('*'), {
    error: 'mixes * with other origins, and * lets any origin in: give * alone, or list only the origins to allow',
  }),
  METRICS_TOKEN: z.string().regex(TOKEN, `must be ${TOKEN_RULE}`).optional(),
  LOAD_SHEDDING_MAX_IN_FLIGHT: integer(0, 100_000).default(256),
  LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: integer(0, 60_000).default(1000),
  LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION: fraction.default(0),
  RATE_LIMIT_PER_MINUTE: integer(0, MAX_LIMIT_PER_MINUTE).default(600),
  AUTH_FAILURE_LIMIT_PER_MINUTE: integer(1, MAX_LIMIT_PER_MINUTE).default(30),
  REDIS_URL: urlWithScheme(['redis', 'rediss'], 'redis://127.0.0.1:6379').optional(),
  HEADERS_TIMEOUT_MS: integer(1000, 600_000).default(10_000),
  REQUEST_TIMEOUT_MS: integer(1000, 600_000).default(30_000),
  KEEP_ALIVE_TIMEOUT_MS: integer(1000, 3_600_000).default(72_000),
  MAX_CONNECTIONS: integer(1, 1_000_000).default(4096),
};

export const VARIABLES: readonly string[] = Object.keys(SERVICE_VARIABLES);

export const parseApiKeys = (raw: string) => apiKeyEntries.parse(raw);

const databaseConfig = (env: z.output<z.ZodObject<typeof DATABASE_VARIABLES>>) => ({
  databaseUrl: env.DATABASE_URL,
  databasePool: { max: env.DATABASE_POOL_MAX, idleTimeoutMs: env.DATABASE_POOL_IDLE_TIMEOUT_MS },
  migrationsRun: env.MIGRATIONS_RUN ?? env.NODE_ENV !== 'production',
  migrationLockTimeoutMs: env.MIGRATION_LOCK_TIMEOUT_MS,
  production: env.NODE_ENV === 'production',
});

const SCHEMAS = {
  database: z.object(DATABASE_VARIABLES).transform(databaseConfig),
  service: z
    .object(SERVICE_VARIABLES)
    .superRefine((env, context) => {
      const refuse = (name: string, message: string) => context.addIssue({ code: 'custom', path: [name], message });
      if (env.REQUEST_TIMEOUT_MS < env.HEADERS_TIMEOUT_MS) {
        refuse('REQUEST_TIMEOUT_MS', `must be at least HEADERS_TIMEOUT_MS, got "${env.REQUEST_TIMEOUT_MS}"`);
      }
      if (env.NODE_ENV !== 'production') return;
      // A page on a remote plain-http origin holds its key where anyone on the way can read and change it.
      const plainHttp = env.CORS_ORIGINS.find(
        (entry) =>
          entry.startsWith('http://') && !['localhost', '127.0.0.1', '[::1]'].includes(new URL(entry).hostname),
      );
      if (plainHttp !== undefined) {
        refuse(
          'CORS_ORIGINS',
          `entry "${plainHttp}" is plain http on a remote host, refused when NODE_ENV=production: serve that page over https`,
        );
      }
      // Every instance behind a load balancer must verify the cursors the others sign: no per-process secret.
      if (env.CURSOR_SECRET === undefined) {
        refuse('CURSOR_SECRET', 'is required when NODE_ENV=production (the same value on every instance)');
      }
    })
    .transform((env) => ({
      host: env.HOST,
      port: env.PORT,
      ...databaseConfig(env),
      replicas: { urls: env.DATABASE_REPLICA_URL, maxLagMs: env.DATABASE_REPLICA_MAX_LAG_MS },
      preparedStatements: env.DATABASE_PREPARED_STATEMENTS,
      apiKeys: env.API_KEYS,
      logLevel: env.LOG_LEVEL,
      cursorSecret: env.CURSOR_SECRET,
      publicBaseUrl: env.PUBLIC_BASE_URL,
      stagingBaseUrl: env.STAGING_BASE_URL,
      shutdownDrainDelayMs: env.SHUTDOWN_DRAIN_DELAY_MS ?? (env.NODE_ENV === 'production' ? 5_000 : 0),
      shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
      readinessOutageGraceMs: env.READINESS_OUTAGE_GRACE_MS,
      readinessRecoveryMs: env.READINESS_RECOVERY_MS,
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
    })),
};

export type DatabaseConfig = z.output<typeof SCHEMAS.database>;
export type AppConfig = z.output<typeof SCHEMAS.service>;

/** What `part` reads of `raw` (empty is unset), typed; or a ConfigError: a published secret, or the first bad one. */
function parse<P extends keyof typeof SCHEMAS>(part: P, raw: NodeJS.ProcessEnv): z.output<(typeof SCHEMAS)[P]> {
  const set = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined && value !== ''));
  for (const [name, instead] of Object.entries(set.NODE_ENV === 'production' ? SECRET_VARIABLES : {})) {
    const entries = name === 'API_KEYS' ? commaList(set[name] ?? '').map(keyOfEntry) : [(set[name] ?? '').trim()];
    const index = entries.findIndex((entry) => PUBLISHED_EXAMPLE_SECRETS.has(entry));
    if (index === -1) continue;
    throw new ConfigError(
      `${name === 'API_KEYS' ? `API_KEYS entry ${index + 1}` : name} is an example value published with this service, refused when NODE_ENV=production: ${instead}`,
    );
  }
  const parsed = SCHEMAS[part].safeParse(set);
  if (parsed.success) return parsed.data as z.output<(typeof SCHEMAS)[P]>;
  const [issue] = parsed.error.issues;
  throw new ConfigError(`${String(issue.path[0])} ${issue.message}`);
}

export const loadDatabaseConfig = (env: NodeJS.ProcessEnv = process.env): DatabaseConfig => parse('database', env);
export const loadConfig = (env: NodeJS.ProcessEnv = process.env): AppConfig => parse('service', env);

/** `part` of `envFilePath` under the real environment, which wins; once valid, Node adds the file to process.env. */
export async function readConfig<P extends keyof typeof SCHEMAS>(part: P, envFilePath = resolve('.env')) {
  const fromFile = existsSync(envFilePath) ? parseEnv(await readFile(envFilePath, 'utf8')) : undefined;
  const config = parse(part, { ...fromFile, ...process.env });
  if (fromFile) process.loadEnvFile(envFilePath);
  return config;
}
