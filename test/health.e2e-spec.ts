import { startTcpProxy } from '../dev/tcp-proxy.js';
import { Database } from '../src/database/database.js';
import { openTransaction } from './support/database-migrations.js';
import { EmbeddedServer, startEmbeddedServer } from './support/database-server.js';
import { pollUntil } from './support/poll.js';
import { ApiResponse, auth, request, startTestApp } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';
import { ShutdownState } from '../src/edge/shutdown-state.js';
import { MIGRATIONS } from '../migrations/index.js';

/** The outage grace this file's app runs with (READINESS_OUTAGE_GRACE_MS); each instance adds up to a fifth. */
const GRACE_MS = 5_000;
const LATEST_UNREADY_MS = 2 * GRACE_MS + 5_000;
/** The recovery period this file's app runs with (READINESS_RECOVERY_MS). */
const RECOVERY_MS = 3_000;

const UNREADY = [
  503,
  { code: 'service_unavailable', message: 'The service is temporarily unavailable; retry later.', status: 503 },
];
const statusAndBody = ({ status, body }: { status: number; body: unknown }) => [status, body];

describe('health probes', () => {
  // A server of its own, which this file stops and starts again.
  let server: EmbeddedServer;
  const bounds = { readinessOutageGraceMs: GRACE_MS, readinessRecoveryMs: RECOVERY_MS };
  beforeAll(async () => {
    server = await startEmbeddedServer();
  }, 60_000);
  const t = testAppPerBlock(bounds, () => ({ adminUrl: server.adminUrl }));
  afterAll(() => server.stop(), 30_000);

  type Ready = ApiResponse<{
    details: Record<string, { status?: string; crowded?: boolean; cachedResponse?: boolean }>;
  }>;
  const ready = (origin = t.origin): Promise<Ready> => request(origin, '/health/ready');
  const readyWhen = (until: (answer: Ready) => boolean, options: Parameters<typeof pollUntil>[1]) =>
    pollUntil(async () => {
      const answer = await ready();
      return until(answer) && answer;
    }, options);
  const readyWith = (check: string, status: string) => (answer: Ready) =>
    answer.status === 200 && answer.body.details?.[check]?.status === status;
  const whileLocked = async <T>(table: string, work: () => Promise<T>): Promise<T> => {
    const locker = await openTransaction(t.database.url, 'BEGIN', `LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    try {
      return await work();
    } finally {
      await locker.end();
    }
  };

  it('answers live and ready without an API key, outside /v1, a flood of probes from one round of checks', async () => {
    expect(await request(t.origin, '/health/live')).toMatchObject({ status: 200, body: { status: 'ok' } });
    for (const path of ['/v1/health/live', '/v1/health/ready'])
      expect((await request(t.origin, path)).status).toBe(404);
    expect(await ready()).toMatchObject({
      status: 200,
      body: {
        status: 'ok',
        details: {
          shutdown: { status: 'up' },
          database: { status: 'up' },
          migrations: { status: 'up', applied: MIGRATIONS.length },
        },
      },
    });
    const probes = await Promise.all(Array.from({ length: 20 }, () => ready()));
    expect(probes.map((probe) => probe.status)).toEqual(Array(20).fill(200));
    // Concurrent probes share one round; terminus marks one computed before the probe came. Shutdown: every probe.
    const cached = probes.filter(
      (probe) => probe.body.details.database.cachedResponse && probe.body.details.migrations.cachedResponse,
    );
    expect(cached.length).toBeGreaterThan(0);
    expect(probes.every((probe) => probe.body.details.shutdown.cachedResponse === undefined)).toBe(true);
  });

  it(
    'stays ready while the database is stopped for less than READINESS_OUTAGE_GRACE_MS (a failover), then turns 503 (Error body), also in an outage beginning more than the grace after the last one ended; once back, stays 503 until it has answered for READINESS_RECOVERY_MS; animal_store_database_reachable follows each round',
    async () => {
      const reachable = async () => {
        const exposition = await (await fetch(`${t.origin}/metrics`)).text();
        return /^animal_store_database_reachable (\d)$/m.exec(exposition)?.[1];
      };
      // A first outage, long enough for a round to see it, then the database answers for longer than the grace.
      await server.pause();
      try {
        await readyWhen(readyWith('database', 'degraded'), { timeoutMs: 5_000, what: 'ready to see the first outage' });
      } finally {
        await server.start();
      }
      await readyWhen(readyWith('database', 'up'), { what: 'ready to see the database back' });
      const since = Date.now();
      await readyWhen((answer) => Date.now() - since > GRACE_MS && readyWith('database', 'up')(answer), {
        timeoutMs: GRACE_MS + 10_000,
        intervalMs: 500,
        what: 'the database to answer for longer than the grace',
      });
      expect(await reachable()).toBe('1');

      await server.pause();
      const stoppedAt = Date.now();
      let backAt: number;
      try {
        // Requests meanwhile get the service's own 503 with Retry-After, from an instance still in the load balancer.
        const pets = await request(t.origin, '/v1/pets', { headers: auth() });
        expect(pets.status).toBe(503);
        expect(pets.headers.get('retry-after')).toBe('5');
        // Past the cached answer (READINESS_CACHE_MS) the checks fail, shown as degraded, and it still answers ready.
        await readyWhen(readyWith('database', 'degraded'), {
          timeoutMs: 5_000,
          what: 'ready to answer 200, database degraded',
        });
        const unready = await readyWhen((answer) => answer.status !== 200, {
          timeoutMs: LATEST_UNREADY_MS,
          intervalMs: 250,
          what: 'ready to turn 503',
        });
        expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(GRACE_MS);
        expect(statusAndBody(unready)).toEqual(UNREADY);
        expect(unready.headers.get('content-type')).toMatch(/^application\/json/);
        // With no probe and no request, a scrape alone reads a round.
        expect(await reachable()).toBe('0');
        // The process itself is fine: an orchestrator must not restart it for a database outage.
        expect((await request(t.origin, '/health/live')).status).toBe(200);
      } finally {
        await server.start();
        backAt = Date.now();
      }
      await pollUntil(async () => (await reachable()) === '1', { what: 'the gauge to see the database back' });
      // The database answers, and the instance stays out: a path that fails again within the period keeps it out.
      expect(statusAndBody(await ready())).toEqual(UNREADY);
      await readyWhen((answer) => answer.status === 200, {
        timeoutMs: RECOVERY_MS + 10_000,
        what: 'ready to return to 200 after the recovery period',
      });
      // Rounds are read at most once a READINESS_CACHE_MS: the first passing one may come up to that late.
      expect(Date.now() - backAt).toBeGreaterThanOrEqual(RECOVERY_MS);
    },
    4 * LATEST_UNREADY_MS + 60_000,
  );

  it('stays ready when the migrations check is the first to lose the database (its table locked past the check timeout)', async () => {
    // The database check still answers; only the migrations check waits, past its timeout.
    const answer = await whileLocked('migrations', () =>
      readyWhen((ready) => ready.status !== 200 || ready.body.details.migrations?.status === 'degraded', {
        timeoutMs: 5_000,
        what: 'the migrations check to time out',
      }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.details.database?.status).toBe('up');
    await readyWhen(readyWith('migrations', 'up'), { what: 'the migrations check to pass again' });
  }, 30_000);

  it('reports a request pool full of waiting requests as crowded, still ready: its checks have a connection of their own', async () => {
    const max = t.app.get(Database).pool.options.max;
    let requests: Promise<unknown>[] = [];
    const answer = await whileLocked('pets', () => {
      // Every pooled connection waits on the lock, and more requests wait for a connection.
      requests = Array.from({ length: 2 * max }, () => request(t.origin, '/v1/pets', { headers: auth() }));
      return readyWhen((ready) => ready.status !== 200 || ready.body.details.database?.crowded === true, {
        timeoutMs: 1_900,
        what: 'ready to report the pool crowded',
      });
    }).finally(() => Promise.all(requests));
    expect(answer.status).toBe(200);
    expect(answer.body.details.database?.status).toBe('up');
  }, 30_000);

  it(
    'stays ready while a path to the database fails a minority of rounds, and turns 503 when it fails nearly all',
    async () => {
      const proxy = await startTcpProxy(server.port);
      const proxied = await startTestApp(bounds, {
        adminUrl: server.adminUrl,
        appUrl: (url) => Object.assign(new URL(url), { port: String(proxy.port) }).toString(),
      });
      /** Cuts the path for `cutMs` in every `periodMs` for `forMs`, sampling readiness every 250 ms meanwhile. */
      const flap = async (cutMs: number, periodMs: number, forMs: number, until?: (status: number) => boolean) => {
        const statuses: number[] = [];
        const start = Date.now();
        while (Date.now() - start < forMs && !statuses.some((status) => until?.(status))) {
          const inPeriod = (Date.now() - start) % periodMs;
          if (inPeriod < cutMs) proxy.blackHole();
          else proxy.forward();
          statuses.push((await ready(proxied.origin)).status);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        proxy.forward();
        return statuses;
      };
      try {
        // A second in four cut, for three times the grace: the stall shape every instance would share.
        const stalls = await flap(1_000, 4_000, 3 * GRACE_MS);
        expect(stalls.filter((status) => status !== 200)).toEqual([]);
        // Four seconds in four and a half: this instance's path is broken, and it goes out.
        const broken = await flap(4_000, 4_500, LATEST_UNREADY_MS + 10_000, (status) => status === 503);
        expect(broken.at(-1)).toBe(503);
        await pollUntil(async () => (await ready(proxied.origin)).status === 200, {
          timeoutMs: 3 * RECOVERY_MS + 10_000,
          what: 'ready to return to 200 once the path holds',
        });
      } finally {
        await proxied.close();
        await proxy.close();
      }
    },
    3 * GRACE_MS + LATEST_UNREADY_MS + 3 * RECOVERY_MS + 60_000,
  );

  it('is not ready while migrations are pending', async () => {
    const unmigrated = await startTestApp({ migrationsRun: false }, { adminUrl: server.adminUrl });
    try {
      expect(statusAndBody(await ready(unmigrated.origin))).toEqual(UNREADY);
      expect((await request(unmigrated.origin, '/health/live')).status).toBe(200);
    } finally {
      await unmigrated.close();
    }
  }, 30_000);

  it('turns ready to 503 as soon as shutdown begins', async () => {
    t.app.get(ShutdownState).begin();
    const answer = await ready();
    expect(statusAndBody(answer)).toEqual(UNREADY);
    expect(answer.headers.get('connection')).toBe('close');
  });
});
