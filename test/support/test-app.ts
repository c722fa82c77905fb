import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { createApp } from '../../src/app.setup.js';
import { AppConfig, parseApiKeys } from '../../src/config/app-config.js';
import { defaultConfig } from './config.js';
import { responseValidatorFor } from './openapi-response-validator.js';
import { createTestDatabase, TestDatabase } from './test-database.js';

export const TEST_KEY = 'test-key-0123456789abcdef';

export interface TestApp {
  app: NestFastifyApplication;
  /** e.g. http://127.0.0.1:41234 */
  origin: string;
  database: TestDatabase;
  /** A direct connection to the test database, for assertions on what was stored. */
  sql: Client;
  close(): Promise<void>;
}

export interface TestAppDatabase {
  /** A server of the test's own instead of the run's shared one. */
  adminUrl?: string;
  /** The address the app uses for its database, e.g. through a proxy the test controls. */
  appUrl?: (databaseUrl: string) => string;
}

/** The real application (createApp: production's modules, globals and hooks) on a real port, on a fresh database. */
export async function startTestApp(overrides: Partial<AppConfig> = {}, where: TestAppDatabase = {}): Promise<TestApp> {
  const database = await createTestDatabase(where.adminUrl);
  const databaseUrl = where.appUrl?.(database.url) ?? database.url;
  // Rate limits are out of the way unless a test sets them (test/abuse-protection.e2e-spec.ts does), and so is
  // shedding on the event loop's delay, which measures how busy the test machine is rather than the service
  // (test/load-shedding.e2e-spec.ts sets its thresholds; the in-flight bound stays at its default).
  const defaults: Partial<AppConfig> = {
    apiKeys: parseApiKeys(TEST_KEY),
    logLevel: 'silent',
    rateLimitPerMinute: 0,
    authFailureLimitPerMinute: 1_000_000,
    loadShedding: { ...defaultConfig().loadShedding, maxEventLoopDelayMs: 0 },
  };
  const config = { ...defaultConfig(databaseUrl), ...defaults, ...overrides, databaseUrl };
  const app = await createApp(config, false);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  // Fetched now, before a test stops the database or overloads the app.
  await responseValidatorFor(origin);
  const sql = new Client({ connectionString: database.url });
  // A test may stop the server under this connection; its queries then fail, the process must not.
  sql.on('error', () => undefined);
  await sql.connect();
  return {
    app,
    origin,
    database,
    sql,
    close: async () => {
      await sql.end();
      await app.close();
      await database.drop();
    },
  };
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * A real HTTP request; the body is parsed when the response says it is JSON. Every response is checked against the
 * served OpenAPI document: one it does not describe fails the test, and so does a refusal it does not state.
 */
export async function request<T = unknown>(
  origin: string,
  path: string,
  init: RequestInit = {},
): Promise<ApiResponse<T>> {
  const url = new URL(`${origin}${path}`);
  const response = await fetch(url, init);
  const text = await response.text();
  const validator = await responseValidatorFor(origin);
  const body = typeof init.body === 'string' || init.body instanceof Uint8Array ? init.body : undefined;
  validator.validate(
    init.method ?? 'GET',
    url,
    { status: response.status, headers: response.headers, text },
    { headers: new Headers(init.headers), body },
  );
  const json = response.headers.get('content-type')?.startsWith('application/json');
  return {
    status: response.status,
    headers: response.headers,
    body: (json && text ? JSON.parse(text) : text) as T,
    text,
  };
}

export const auth = (key = TEST_KEY) => ({ authorization: `Bearer ${key}` });

export const jsonBody = (body: unknown, key = TEST_KEY): RequestInit => ({
  method: 'POST',
  headers: { ...auth(key), 'content-type': 'application/json' },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
