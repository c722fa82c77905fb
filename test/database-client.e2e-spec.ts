import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { DatabaseClient } from '../src/database/database-client.js';
import { isDatabaseUnavailable } from '../src/http/errors/to-api-error.js';
import { pollUntil } from './support/poll.js';
import { startTcpProxy, TcpProxy } from './support/tcp-proxy.js';
import { createTestDatabase, TestDatabase } from './support/test-database.js';

const DEADLINE_MS = 300;

describe('DatabaseClient query deadline', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let client: DatabaseClient;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await startTcpProxy(Number(new URL(database.url).port));
  });

  beforeEach(async () => {
    const url = new URL(database.url);
    url.port = String(proxy.port);
    client = new DatabaseClient({ connectionString: url.toString(), queryDeadlineMs: DEADLINE_MS });
    await client.connect();
  });

  const afterEachRestore: (() => void)[] = [];
  afterEach(async () => {
    await client.end().catch(() => undefined);
    afterEachRestore.splice(0).forEach((restore) => restore());
  });

  afterAll(async () => {
    await proxy.close();
    await database.drop();
  });

  it('fails a query the server never answers soon after the deadline, as "database unavailable"', async () => {
    // The dropped connection is reported once, as a warning.
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    afterEachRestore.push(() => warned.mockRestore());
    proxy.stall();
    const started = Date.now();

    const error = await client.query('SELECT 1').then(
      () => null,
      (failure: unknown) => failure,
    );

    const elapsed = Date.now() - started;
    expect(error).toMatchObject({ code: 'ETIMEDOUT', message: `No answer from the database within ${DEADLINE_MS} ms` });
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(DEADLINE_MS);
    expect(elapsed).toBeLessThan(DEADLINE_MS + 1_000);
    await pollUntil(async () => warned.mock.calls.length > 0, { what: 'the connection-lost warning' });
    expect(warned).toHaveBeenCalledWith(`Database connection lost: No answer from the database within ${DEADLINE_MS} ms`);
  });

  it('times each query on its own: queries sent back to back, together past the deadline, all succeed', async () => {
    // Each query is sent from the callback of the previous one, as the pool does when requests wait for a connection.
    const results = await new Promise<number[]>((resolve, reject) => {
      const seen: number[] = [];
      const next = (n: number) =>
        client.query('SELECT $1::int AS n, pg_sleep(0.1)', [n], (error: Error | null, result: { rows: { n: number }[] }) => {
          if (error) return reject(error);
          seen.push(result.rows[0].n);
          if (n < 5) next(n + 1);
          else resolve(seen);
        });
      next(0);
    });

    expect(results).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
