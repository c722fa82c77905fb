import { isIP } from 'node:net';
import { applyDecorators } from '@nestjs/common';
import { ClassConstructor, plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  Matches,
  Max,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
  ValidationArguments,
  validateSync,
} from 'class-validator';
import { publishedSecretProblem } from './published-secrets.js';

export const LOG_LEVELS = ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const CURSOR_SECRET_MIN_LENGTH = 32;

/** The largest RATE_LIMIT_PER_MINUTE and AUTH_FAILURE_LIMIT_PER_MINUTE accepted (the OpenAPI document's bound too). */
export const MAX_LIMIT_PER_MINUTE = 1_000_000;

/** The database pool's defaults (docs/operating.md, "Sizing the database pool"). */
export const DATABASE_POOL_DEFAULTS = { max: 10, idleTimeoutMs: 10_000 } as const;

export class ConfigError extends Error {}

const got = (args: ValidationArguments) => `got "${args.value}"`;

/** A whole decimal number from `min` to `max`; anything else (` 80`, `1e3`, `80.5`) stays a string and is refused. */
function IntegerFrom(min: number, max: number) {
  const message = (args: ValidationArguments) =>
    `${args.property} must be an integer from ${min} to ${max}, ${got(args)}`;
  return applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value,
    ),
    IsInt({ message }),
    Min(min, { message }),
    Max(max, { message }),
  );
}

function FractionFrom0To1() {
  const message = (args: ValidationArguments) => `${args.property} must be a number from 0 to 1, ${got(args)}`;
  return applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && /^(0(\.\d+)?|1(\.0+)?)$/.test(value) ? Number(value) : value,
    ),
    IsNumber({}, { message }),
  );
}

function TrueOrFalse() {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value)),
    IsBoolean({ message: (args) => `${args.property} must be "true" or "false", ${got(args)}` }),
  );
}

function schemeOf(value: unknown): string | null {
  try {
    return new URL(String(value)).protocol;
  } catch {
    return null;
  }
}

/** An optional URL with one of `protocols` (as `URL.protocol` gives them); the value is never echoed (it may hold a password). */
function UrlWithScheme(protocols: [string, string], example: string) {
  return applyDecorators(
    IsOptional(),
    ValidateBy({
      name: 'urlWithScheme',
      validator: {
        validate: (value) => protocols.includes(schemeOf(value) ?? ''),
        defaultMessage: (args) =>
          schemeOf(args!.value) === null
            ? `${args!.property} must be a URL such as ${example}`
            : `${args!.property} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`,
      },
    }),
  );
}

/** A base URL of the OpenAPI document's `servers`: http(s), path ending in /v1, no query or fragment. */
function BaseUrlEndingInV1(example: string) {
  const baseUrl = (value: unknown) => {
    try {
      return new URL(String(value));
    } catch {
      return null;
    }
  };
  return ValidateBy({
    name: 'baseUrlEndingInV1',
    validator: {
      validate: (value) => {
        const url = baseUrl(value);
        return (
          url !== null &&
          ['http:', 'https:'].includes(url.protocol) &&
          /\/v1\/?$/.test(url.pathname) &&
          !url.search &&
          !url.hash
        );
      },
      defaultMessage: (args) =>
        baseUrl(args!.value) === null
          ? `${args!.property} must be a URL such as ${example}, ${got(args!)}`
          : `${args!.property} must be an http(s) URL ending in /v1, ${got(args!)}`,
    },
  });
}

const TOKEN = /^[\x21-\x7e]{16,512}$/;

/** Comma-separated keys, trimmed, empty entries dropped; an invalid one is named by its position, never shown. */
function KeyList() {
  const firstInvalid = (keys: unknown) => (Array.isArray(keys) ? keys.findIndex((key: string) => !TOKEN.test(key)) : 0);
  return applyDecorators(
    Transform(({ value }) =>
      String(value ?? '')
        .split(',')
        .map((key) => key.trim())
        .filter((key) => key !== ''),
    ),
    ValidateBy({
      name: 'keyList',
      validator: {
        validate: (keys) => firstInvalid(keys) === -1,
        defaultMessage: (args) =>
          `${args!.property} entry ${firstInvalid(args!.value) + 1} must be 16 to 512 printable characters without spaces`,
      },
    }),
  );
}

// Each entry as proxy-addr (Fastify's trustProxy) parses it; `true` or a hop count would trust forged headers.
const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isAddressOrRange(entry: string): boolean {
  const [address, bits, extra] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128);
}

/** Comma-separated proxy addresses, CIDR ranges or proxy-addr's names; the first invalid one is named. */
function ProxyList() {
  const firstInvalid = (entries: unknown) =>
    Array.isArray(entries)
      ? (entries as string[]).find((entry) => !PROXY_NAMES.includes(entry) && !isAddressOrRange(entry))
      : '';
  return applyDecorators(
    Transform(({ value }) =>
      String(value ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    ),
    ValidateBy({
      name: 'proxyList',
      validator: {
        validate: (entries) => firstInvalid(entries) === undefined,
        defaultMessage: (args) =>
          `${args!.property} must list proxy addresses or CIDR ranges (or ${PROXY_NAMES.join(', ')}), comma-separated; "${firstInvalid(args!.value)}" is none of these`,
      },
    }),
  );
}

/**
 * The database part: what every command that opens the database reads (the migration and key commands, TypeORM's
 * CLI, and the service). Those commands validate this part alone, so that they run with DATABASE_URL only.
 */
export class DatabaseEnvironment {
  NODE_ENV?: string;

  @UrlWithScheme(['postgres:', 'postgresql:'], 'postgres://user:password@host:5432/db')
  DATABASE_URL?: string;

  /** Connections each instance may open to the database. */
  @IntegerFrom(1, 10_000)
  DATABASE_POOL_MAX = DATABASE_POOL_DEFAULTS.max;

  /** How long a pooled connection may stay idle before it is closed (0: never). */
  @IntegerFrom(0, 3_600_000)
  DATABASE_POOL_IDLE_TIMEOUT_MS = DATABASE_POOL_DEFAULTS.idleTimeoutMs;

  /** Unset: true in development, false in production (the one-shot migrate step applies them). */
  @IsOptional()
  @TrueOrFalse()
  MIGRATIONS_RUN?: boolean;

  /**
   * How long a migration waits for each lock before it gives up. Requests on a table queue behind a migration
   * waiting for it; below the requests' statement timeout they are delayed, not failed.
   */
  @IntegerFrom(1, 600_000)
  MIGRATION_LOCK_TIMEOUT_MS = 3_000;

  DATA_DIR = '.data';

  @IntegerFrom(1, 65535)
  EMBEDDED_POSTGRES_PORT = 5433;
}

/**
 * The service's environment: every variable, its rule and its default, in one place. The service validates
 * all of it; a new variable is one property here (and its typed name in AppConfig), or in DatabaseEnvironment
 * when the commands read it too. Values arrive as strings; empty ones count as unset.
 * Variables of other tools (PATH, TEST_DATABASE_URL …) pass through unchecked.
 */
export class Environment extends DatabaseEnvironment {
  HOST = '127.0.0.1';

  @IntegerFrom(0, 65535)
  PORT = 3000;

  @KeyList()
  API_KEYS: string[] = [];

  @IsIn(LOG_LEVELS, { message: (args) => `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, ${got(args)}` })
  LOG_LEVEL: LogLevel = 'info';

  // Every instance behind a load balancer must verify the cursors the others sign,
  // so production refuses to start with a per-process secret.
  @ValidateIf((env: Environment) => env.NODE_ENV === 'production' || env.CURSOR_SECRET !== undefined)
  @IsDefined({ message: 'CURSOR_SECRET is required when NODE_ENV=production (the same value on every instance)' })
  @MinLength(CURSOR_SECRET_MIN_LENGTH, {
    message: `CURSOR_SECRET must be at least ${CURSOR_SECRET_MIN_LENGTH} characters`,
  })
  CURSOR_SECRET?: string;

  @BaseUrlEndingInV1('https://api.example.com/v1')
  PUBLIC_BASE_URL = 'https://api.example.com/v1';

  @BaseUrlEndingInV1('https://staging-api.example.com/v1')
  STAGING_BASE_URL = 'https://staging-api.example.com/v1';

  /** Unset: 5000 in production, 0 otherwise. */
  @IsOptional()
  @IntegerFrom(0, 600_000)
  SHUTDOWN_DRAIN_DELAY_MS?: number;

  @IntegerFrom(0, 600_000)
  SHUTDOWN_GRACE_MS = 10_000;

  @ProxyList()
  TRUST_PROXY: string[] = [];

  @IsOptional()
  @Matches(TOKEN, { message: 'METRICS_TOKEN must be 16 to 512 printable characters without spaces' })
  METRICS_TOKEN?: string;

  @IntegerFrom(0, 100_000)
  LOAD_SHEDDING_MAX_IN_FLIGHT = 256;

  @IntegerFrom(0, 60_000)
  LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS = 1000;

  @FractionFrom0To1()
  LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION = 0;

  @IntegerFrom(0, MAX_LIMIT_PER_MINUTE)
  RATE_LIMIT_PER_MINUTE = 600;

  @IntegerFrom(1, MAX_LIMIT_PER_MINUTE)
  AUTH_FAILURE_LIMIT_PER_MINUTE = 30;

  @UrlWithScheme(['redis:', 'rediss:'], 'redis://127.0.0.1:6379')
  REDIS_URL?: string;

  // The HTTP edge's time limits and connection cap (docs/operating.md, "Timeouts and connections").
  @IntegerFrom(1000, 600_000)
  HEADERS_TIMEOUT_MS = 10_000;

  @ValidateBy({
    name: 'notBelowHeadersTimeout',
    validator: {
      validate: (value, args) => typeof value !== 'number' || value >= (args!.object as Environment).HEADERS_TIMEOUT_MS,
      defaultMessage: (args) => `REQUEST_TIMEOUT_MS must be at least HEADERS_TIMEOUT_MS, ${got(args!)}`,
    },
  })
  @IntegerFrom(1000, 600_000)
  REQUEST_TIMEOUT_MS = 30_000;

  @IntegerFrom(1000, 3_600_000)
  KEEP_ALIVE_TIMEOUT_MS = 72_000;

  @IntegerFrom(1, 1_000_000)
  MAX_CONNECTIONS = 4096;
}

/** The parts an entry point can validate: the service all of it, the commands that open the database their part. */
export const ENVIRONMENT_PARTS = { database: DatabaseEnvironment, service: Environment } as const;
export type EnvironmentPart = keyof typeof ENVIRONMENT_PARTS;
type PartOf<P extends EnvironmentPart> = InstanceType<(typeof ENVIRONMENT_PARTS)[P]>;

/**
 * Validates `raw` against one part of the schema (the `validate` function of `ConfigModule.forRoot`): the typed
 * environment, or a ConfigError whose one-line message names the first bad variable. Whatever the part, production
 * refuses a secret this repository publishes as an example.
 */
export function validateEnvironment<P extends EnvironmentPart = 'service'>(
  raw: Record<string, unknown>,
  part: P = 'service' as P,
): PartOf<P> {
  const set = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined && value !== ''));
  const published = set.NODE_ENV === 'production' ? publishedSecretProblem(set) : null;
  if (published) throw new ConfigError(published);
  const environment = plainToInstance(ENVIRONMENT_PARTS[part] as ClassConstructor<PartOf<P>>, set, {
    exposeDefaultValues: true,
  });
  const [error] = validateSync(environment, { stopAtFirstError: true });
  if (error) throw new ConfigError(Object.values(error.constraints ?? {})[0] ?? `${error.property} is invalid`);
  return environment;
}
