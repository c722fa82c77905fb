import { expect } from '@jest/globals';
import { EmbeddedServer, startEmbeddedServer } from './support/database-server.js';
import { startTcpProxy, TcpProxy } from '../dev/tcp-proxy.js';
import { terminateServiceSessions } from './support/test-database.js';
import type { Pet } from '../src/pets/dto/pet.dto.js';
import { burst, expectAcknowledgedStored, expectUnavailable } from './support/database-answers.js';
import { auth, jsonBody, request, startTestApp, TestApp } from './support/test-app.js';

/** The longest any request may take while the database is away. */
const ANSWER_WITHIN_MS = 3_000;
/** How soon the service must serve again once the database is back. */
const RECOVER_WITHIN_MS = 5_000;

describe('database faults', () => {
  let server: EmbeddedServer;
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    // A PostgreSQL of this file's own, which it stops and starts, reached by the app through a proxy it can black-hole.
    server = await startEmbeddedServer();
    proxy = await startTcpProxy(server.port);
    t = await startTestApp(
      {},
      {
        adminUrl: server.adminUrl,
        appUrl: (url) => Object.assign(new URL(url), { port: String(proxy.port) }).toString(),
      },
    );
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await server?.stop();
  });

  /** A real request that fails the test (the fetch aborts) if no answer comes within the bound. */
  const boundedRequest = <T = unknown>(path: string, init: RequestInit = {}) =>
    request<T>(t.origin, path, { ...init, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });

  async function servesAgain(withinMs: number): Promise<boolean> {
    const deadline = Date.now() + withinMs;
    while (Date.now() < deadline) {
      const response = await request(t.origin, '/v1/pets', {
        headers: auth(),
        signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
      }).catch(() => undefined);
      if (response?.status === 200) return true;
    }
    return false;
  }

  it('keeps every acknowledged create when the backends are killed mid-burst', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `burst-${i}`);
    let answered = 0;
    let terminated = 0;
    const answers = await burst(300, 20, async (i) => {
      const answer = await request<Pet>(t.origin, '/v1/pets', jsonBody({ name: names[i], categoryId: 7 }));
      // Every 25 answers, kill the app's connections while the other workers' inserts are in flight.
      if (++answered % 25 === 0) {
        // Read after the await: `terminated += await …` would add to a count other workers have since raised.
        const killed = await terminateServiceSessions(t.sql);
        terminated += killed;
      }
      return answer;
    });

    expect(terminated).toBeGreaterThan(0);
    // Every answer is a 201 or a 503, so a stored row nobody was told about can only come from a lost answer (a 503).
    for (const answer of answers) if (answer.status !== 201) expectUnavailable(answer);
    await expectAcknowledgedStored(t.sql, answers, names);
    expect(await servesAgain(RECOVER_WITHIN_MS)).toBe(true);
  });

  /** Requests answered 503 within the bound during the fault, then served again without a restart. */
  const outage = (fault: 'hole' | 'down') => async () => {
    const [lost, after] = [`Lost: ${fault}`, `After: ${fault}`];
    const created = await boundedRequest<Pet>('/v1/pets', jsonBody({ name: `Before: ${fault}`, categoryId: 1 }));
    expect(created.status).toBe(201);

    await (fault === 'hole' ? proxy.blackHole() : server.pause());
    try {
      const responses = await Promise.all([
        boundedRequest('/v1/pets?status=available', { headers: auth() }),
        boundedRequest('/v1/pets', jsonBody({ name: lost, categoryId: 1 })),
        boundedRequest(`/v1/pets/${created.body.id}`, { headers: auth() }),
        ...Array.from({ length: 15 }, () => boundedRequest('/v1/pets', { headers: auth() })),
      ]);
      responses.forEach(expectUnavailable);
      // Requests that need no database are still served: the process is up and answering.
      expect((await boundedRequest('/v1/pets')).status).toBe(401);
    } finally {
      await (fault === 'hole' ? proxy.forward() : server.start());
    }

    expect(await servesAgain(RECOVER_WITHIN_MS)).toBe(true);
    expect((await boundedRequest(`/v1/pets/${created.body.id}`, { headers: auth() })).status).toBe(200);
    const acknowledged = await boundedRequest<Pet>('/v1/pets', jsonBody({ name: after, categoryId: 1 }));
    expect(acknowledged.status).toBe(201);
    // The create answered 503 never reached the database; the acknowledged one is stored. (t.sql's own session
    // ends with a restart of PostgreSQL.)
    if (fault === 'down') return;
    const { rows } = await t.sql.query('SELECT id, name FROM pets WHERE name = ANY($1)', [[lost, after]]);
    expect(rows).toEqual([{ id: String(acknowledged.body.id), name: after }]);
  };
  // Pooled connections exist before: they are reset, and every new one hangs until the connect timeout.
  it('answers 503 within the bound while the database is a black hole, and serves again after', outage('hole'));
  it('answers 503 within the bound while PostgreSQL is down, and serves again', outage('down'), 60_000);
});
