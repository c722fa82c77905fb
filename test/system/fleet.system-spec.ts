import { expect } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { MIGRATIONS } from '../../migrations/index.js';
import { KEY_CACHE_TTL_MS } from '../../src/auth/api-key-store.js';
import { SESSION_TIMEOUTS } from '../../src/database/session-timeouts.js';
import { ensureBuilt, run } from '../support/built-service.js';
import { freePort } from '../support/database-server.js';
import {
  Balancer,
  BalancerSettings,
  PgBouncer,
  PostgresCluster,
  queryOnce,
  startHaproxy,
  startPgBouncer,
  startPostgres,
} from '../support/fleet/debian-services.js';
import {
  acknowledged,
  expectAcknowledgedStoredOnce,
  isFailure,
  loggedErrors,
  reporter,
  startLoad,
  storedByName,
  summarise,
} from '../support/fleet/load.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, RedisServer } from '../support/redis-server.js';
import { ServiceProcess, startService } from '../support/service-process.js';

/**
 * A fleet as operators run it, from Debian's packages on 127.0.0.1: PostgreSQL, PgBouncer in transaction mode, Redis,
 * HAProxy health-checking /health/ready, and three built instances sharing CURSOR_SECRET, REDIS_URL and the database
 * through PgBouncer; migrations run once, directly on PostgreSQL. docs/operating.md ("Running several instances")
 * quotes the figures printed.
 */

/** The roles compose/roles.sh makes: the service's (rows only, with the requests' timeouts) and the owner's. */
const APP_ROLE = 'animal_store_api';
const OWNER_ROLE = 'animal_store_owner';
const DATABASE = 'animal_store';
const KEY = 'fleet-test-key-0123456789abcdef';
/** A key of its own for the shared-budget case, whose budget no other case spends. */
const BUDGET_KEY = 'fleet-budget-key-0123456789abcdef';
const CURSOR_SECRET = randomBytes(32).toString('base64url');
const BALANCER: BalancerSettings = { interMs: 500, fall: 2, rise: 2 };
// At least the balancer's interval x fall, doubled for a loaded machine: it must see the 503 before the listener closes.
const DRAIN_DELAY_MS = 2 * BALANCER.interMs * BALANCER.fall;
const NAMES = ['a', 'b', 'c'] as const;
type Name = (typeof NAMES)[number];
const LOAD_RATE = 50;
/** At least 25 s at 50 requests/s, about the three restarts' time: the load runs on while they last, up to 80 s. */
const LOAD_COUNT = 1_250;
const MAX_LOAD_COUNT = 4_000;
/** Before and after the kill: the balancer marks the instance down within about a second. */
const KILL_LOAD_COUNT = LOAD_RATE * 12;

const report = reporter('fleet');

let postgres: PostgresCluster;
let bouncer: PgBouncer;
let redis: RedisServer;
let balancer: Balancer;
/** The service's database, directly (not through PgBouncer): what was stored. */
const stored = (text: string) => queryOnce(postgres.url(DATABASE), text);
/** The database's role settings (with their row versions) as compose/roles.sh left them, before any instance. */
let madeByRoles: unknown[];
const roleSettings = () =>
  stored(`SELECT s.setrole::regrole::text AS role, s.setconfig, s.xmin::text AS version
    FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
    WHERE d.datname = current_database() ORDER BY 1`);
const ports = {} as Record<Name, number>;
const instances = {} as Record<Name, ServiceProcess>;
/** Every process the test started, restarts included: their logs are checked at the end. */
const everyProcess: ServiceProcess[] = [];

/** What each instance runs with: production, sharing the database (through PgBouncer), Redis and CURSOR_SECRET. */
const instanceEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  NODE_ENV: 'production',
  DATABASE_URL: bouncer.url(DATABASE, APP_ROLE),
  REDIS_URL: redis.url,
  CURSOR_SECRET,
  API_KEYS: `${KEY},${BUDGET_KEY}`,
  MIGRATIONS_RUN: 'false',
  LOG_LEVEL: 'info',
  RATE_LIMIT_PER_MINUTE: '0',
  SHUTDOWN_DRAIN_DELAY_MS: String(DRAIN_DELAY_MS),
  SHUTDOWN_GRACE_MS: '10000',
  TRUST_PROXY: '127.0.0.1',
  // PgBouncer 1.18 (Debian 12's) in transaction pooling carries no prepared statement across server connections.
  DATABASE_PREPARED_STATEMENTS: 'false',
  ...extra,
});

async function startInstance(name: Name): Promise<ServiceProcess> {
  const service = await startService(instanceEnv(), { port: ports[name] });
  everyProcess.push(service);
  instances[name] = service;
  return service;
}

const balancerSees = (name: Name, state: 'UP' | 'DOWN') =>
  pollUntil(
    async () => {
      const states = await balancer.states();
      return states.retrying[name] === state && states.strict[name] === state;
    },
    { timeoutMs: 30_000, intervalMs: 50, what: `HAProxy to mark ${name} ${state}` },
  );

const bearer = (key = KEY) => ({ authorization: `Bearer ${key}` });
const create = (instance: ServiceProcess, name: string, idempotencyKey?: string) =>
  fetch(`${instance.origin}/v1/pets`, {
    method: 'POST',
    headers: {
      ...bearer(),
      'content-type': 'application/json',
      ...(idempotencyKey && { 'idempotency-key': idempotencyKey }),
    },
    body: JSON.stringify({ name, categoryId: 1 }),
  });
const cli = (script: string, args: string[], databaseUrl: string) =>
  run(process.execPath, [`dist/src/cli/${script}.js`, ...args], {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: databaseUrl,
    MIGRATIONS_RUN: 'false',
  });

beforeAll(async () => {
  await ensureBuilt();
  postgres = await startPostgres();
  // The roles as in production, by the script Compose and the Kubernetes roles Job run (passwords unused: trust).
  await queryOnce(postgres.url(), `CREATE DATABASE ${DATABASE}`);
  const secrets = await mkdtemp(join(tmpdir(), 'fleet-roles-'));
  for (const name of ['postgres', 'owner', 'api']) await writeFile(join(secrets, `${name}-password`), 'unused');
  const roles = await run('bash', ['compose/roles.sh'], {
    PATH: process.env.PATH ?? '',
    PGHOST: '127.0.0.1',
    PGPORT: String(postgres.port),
    PGUSER: 'postgres',
    PGDATABASE: DATABASE,
    POSTGRES_PASSWORD_FILE: join(secrets, 'postgres-password'),
    SECRETS_DIR: secrets,
  });
  await rm(secrets, { recursive: true });
  expect(roles).toMatchObject({ code: 0, stdout: expect.stringContaining(`${OWNER_ROLE} and ${APP_ROLE} ready`) });
  madeByRoles = await roleSettings();
  redis = await startRedisServer();

  const migrated = await cli('migrations', ['run'], postgres.url(DATABASE, OWNER_ROLE));
  const applied = MIGRATIONS.map((migration) => migration.name).join(', ');
  expect(migrated).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^Applied ${applied} on `)) });

  bouncer = await startPgBouncer(postgres, [APP_ROLE, OWNER_ROLE, 'postgres'], 20);
  for (const name of NAMES) ports[name] = await freePort();
  for (const name of NAMES) await startInstance(name);
  balancer = await startHaproxy(ports, BALANCER);
  for (const name of NAMES) await balancerSees(name, 'UP');
}, 300_000);

afterAll(async () => {
  for (const service of everyProcess) service.kill('SIGKILL');
  await Promise.allSettled(everyProcess.map((service) => service.exited));
  await balancer?.stop();
  await bouncer?.stop();
  await redis?.stop();
  await postgres?.stop();
}, 60_000);

describe('a fleet through PgBouncer in transaction mode', () => {
  it("keeps the service's role's statement and idle-in-transaction timeouts: a slow statement is cancelled through PgBouncer", async () => {
    const client = new pg.Client({ connectionString: bouncer.url(DATABASE, APP_ROLE) });
    await client.connect();
    try {
      for (const [setting, ms] of Object.entries(SESSION_TIMEOUTS)) {
        expect((await client.query<Record<string, string>>(`SHOW ${setting}`)).rows[0][setting]).toBe(`${ms / 1000}s`);
      }
      const started = Date.now();
      const slow = await client
        .query(`SELECT pg_sleep(${SESSION_TIMEOUTS.statement_timeout / 1000 + 3})`)
        .catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      report('slow statement through PgBouncer', { code: (slow as { code?: string }).code, cancelledAfterMs: elapsed });
      expect(slow).toMatchObject({ code: '57014' });
      expect(elapsed).toBeLessThan(SESSION_TIMEOUTS.statement_timeout + 2_000);
    } finally {
      await client.end();
    }
    expect(bouncer.output()).not.toMatch(/unsupported startup parameter/);
    // Set on the service's role only, where the roles are made; the instances' starts wrote nothing.
    expect(madeByRoles).toEqual([
      {
        role: APP_ROLE,
        setconfig: Object.entries(SESSION_TIMEOUTS).map(([name, ms]) => `${name}=${ms}`),
        version: expect.any(String),
      },
    ]);
    expect(await roleSettings()).toEqual(madeByRoles);
  }, 30_000);

  it('runs concurrent migration runners safely: one applies, the others wait and find nothing', async () => {
    await queryOnce(postgres.url(), `CREATE DATABASE migrate_race OWNER ${OWNER_ROLE}`);
    const url = bouncer.url('migrate_race', OWNER_ROLE);
    const runners = await Promise.all(Array.from({ length: 4 }, () => cli('migrations', ['run'], url)));
    expect(runners.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    expect(runners.filter((r) => /^Applied CreatePets/.test(r.stdout))).toHaveLength(1);
    expect(runners.filter((r) => /^No pending migrations on /.test(r.stdout))).toHaveLength(3);
  }, 120_000);
});

describe('guarantees across instances', () => {
  it('a cursor issued by one instance works on another', async () => {
    for (const name of ['cursor-1', 'cursor-2']) expect((await create(instances.a, name)).status).toBe(201);
    const first = await fetch(`${instances.a.origin}/v1/pets?limit=1`, { headers: bearer() });
    const next = /<([^>]+)>/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toMatch(/cursor=/);
    const second = await fetch(new URL(next!, `${instances.b.origin}/v1/pets`), { headers: bearer() });
    const [firstPet] = (await first.json()) as { id: number }[];
    const secondPage = (await second.json()) as { id: number }[];
    expect(second.status).toBe(200);
    expect(secondPage[0].id).toBeGreaterThan(firstPet.id);
  });

  it('the per-key budget is shared: 12 + 12 requests over two instances with a budget of 20 give exactly 4 refusals', async () => {
    const limited = instanceEnv({ RATE_LIMIT_PER_MINUTE: '20' });
    const pair = [await startService(limited), await startService(limited)];
    everyProcess.push(...pair);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 24; i += 1) {
        const response = await fetch(`${pair[i % 2].origin}/v1/pets?limit=1`, { headers: bearer(BUDGET_KEY) });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
      report('shared budget of 20, 12 + 12 requests', statuses);
      expect(statuses).toEqual([...Array<number>(20).fill(200), ...Array<number>(4).fill(429)]);
    } finally {
      for (const service of pair) service.kill('SIGTERM');
      await Promise.all(pair.map((service) => service.exited));
    }
  }, 120_000);

  it('a key revoked with the CLI is refused by every instance within the documented time', async () => {
    const created = await cli('apikey', ['create', 'fleet-revocation'], bouncer.url(DATABASE, APP_ROLE));
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    for (const name of NAMES) {
      expect((await fetch(`${instances[name].origin}/v1/pets?limit=1`, { headers: bearer(key) })).status).toBe(200);
    }
    const revoked = await cli('apikey', ['revoke', key.slice(0, 12)], bouncer.url(DATABASE, APP_ROLE));
    expect(revoked).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Revoked API key/) });
    const revokedAt = Date.now();
    const refusedAfter = await Promise.all(
      NAMES.map(async (name) => {
        await pollUntil(
          async () =>
            (await fetch(`${instances[name].origin}/v1/pets?limit=1`, { headers: bearer(key) })).status === 401,
          { timeoutMs: KEY_CACHE_TTL_MS + 5_000, intervalMs: 50, what: `instance ${name} to refuse the revoked key` },
        );
        return Date.now() - revokedAt;
      }),
    );
    report(`revoked key refused by ${NAMES.join(', ')} after (ms, from the CLI exit)`, refusedAfter);
    // Documented: within KEY_CACHE_TTL_MS of the revocation (the CLI's own exit comes after it).
    for (const elapsed of refusedAfter) expect(elapsed).toBeLessThanOrEqual(KEY_CACHE_TTL_MS);
  }, 60_000);

  it('an Idempotency-Key create sent to one instance and repeated on another returns the same animal, one row', async () => {
    const first = await create(instances.a, 'fleet-idempotent', 'fleet-idempotent-1');
    const again = await create(instances.c, 'fleet-idempotent', 'fleet-idempotent-1');
    expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
    expect(await again.json()).toEqual(await first.json());
    expect(await stored("SELECT id FROM pets WHERE name = 'fleet-idempotent'")).toHaveLength(1);
  });
});

/** SIGTERM, then the balancer takes it out and it exits; started again, the balancer has it back. Times from SIGTERM. */
async function restart(name: Name) {
  const signalledAt = Date.now();
  instances[name].kill('SIGTERM');
  let exitedAfterMs = 0;
  const exited = instances[name].exited.then((exit) => ((exitedAfterMs = Date.now() - signalledAt), exit));
  await balancerSees(name, 'DOWN');
  const downAfterMs = Date.now() - signalledAt;
  const exit = await Promise.race([exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000))]);
  if (!exit) throw new Error(`instance ${name} did not exit within 30 s of SIGTERM`);
  await startInstance(name);
  await balancerSees(name, 'UP');
  return { name, downAfterMs, exitedAfterMs, exitCode: exit.code, upAgainAfterMs: Date.now() - signalledAt };
}

const FRONTENDS = ['retrying', 'strict'] as const;
const retries = (frontend: string) => `LB retries ${frontend === 'retrying' ? 'on' : 'off'}`;

/** The same load through each of the balancer's frontends at once, each under its own prefix. */
function startLoads(prefix: string, settings: { count: number; maxCount?: number }) {
  const loads = FRONTENDS.map((frontend) =>
    startLoad({
      origin: balancer.origins[frontend],
      key: KEY,
      prefix: `${prefix}-${frontend}`,
      ratePerSecond: LOAD_RATE,
      ...settings,
    }),
  );
  return {
    finish: () => loads.forEach((load) => load.finish()),
    /** Each frontend's outcomes, and the rows stored under its prefix. */
    done: () =>
      Promise.all(
        FRONTENDS.map(async (frontend, i) => ({
          frontend,
          outcomes: await loads[i].done,
          stored: await storedByName(postgres.url(DATABASE), `${prefix}-${frontend}`),
        })),
      ),
  };
}
type FrontendLoad = Awaited<ReturnType<ReturnType<typeof startLoads>['done']>>[number];

/** What is printed of a frontend's load: every failure, sent so long after `since`. */
const figures = ({ outcomes, stored }: FrontendLoad, since: number) => ({
  ...summarise(outcomes),
  rowsStored: stored.size,
  failures: outcomes.filter(isFailure).map((o) => `${o.operation} ${o.status ?? o.error} at ${o.sentAt - since} ms`),
});

// One rolling restart serves both frontends' cases: the same restarts, each frontend under its own load.
describe('rolling restart under load (about 50 requests/s through each frontend for about 25 s through HAProxy)', () => {
  const restarts: Awaited<ReturnType<typeof restart>>[] = [];
  let results: FrontendLoad[];
  let timing: { loadMs: number; restartsDoneAfterMs: number };
  beforeAll(async () => {
    // Runs on past LOAD_COUNT while a slow machine is still restarting: every restart happens under load.
    const loads = startLoads('roll', { count: LOAD_COUNT, maxCount: MAX_LOAD_COUNT });
    const loadStarted = Date.now();
    await new Promise((wake) => setTimeout(wake, 3_000));
    try {
      for (const name of NAMES) restarts.push(await restart(name));
      await new Promise((wake) => setTimeout(wake, 2_000));
    } finally {
      loads.finish();
    }
    const restartsDoneAfterMs = Date.now() - loadStarted;
    results = await loads.done();
    timing = { loadMs: Date.now() - loadStarted, restartsDoneAfterMs };
    for (const result of results) {
      const title = `rolling restart through the ${result.frontend} frontend (${retries(result.frontend)})`;
      report(title, { ...figures(result, loadStarted), ...timing, restarts });
    }
  }, 240_000);

  it.each([
    ['on safe requests', 0],
    ['off', 1],
  ])('with balancer retries %s: every request 2xx, no resets, every 201 stored once', (_, i) => {
    const { outcomes, stored } = results[i];
    expect(timing.restartsDoneAfterMs).toBeLessThan(timing.loadMs);
    for (const restarted of restarts) {
      expect(restarted.exitCode).toBe(0);
      // The balancer took it out while it still served (the drain delay), not by finding it gone.
      expect(restarted.downAfterMs).toBeLessThan(restarted.exitedAfterMs);
    }
    expect(outcomes.length).toBeGreaterThanOrEqual(LOAD_COUNT);
    expect(outcomes.filter(isFailure)).toEqual([]);
    expect(acknowledged(outcomes)).toHaveLength(outcomes.filter((o) => o.operation === 'create').length);
    expectAcknowledgedStoredOnce(outcomes, stored);
  });
});

it('kill -9 of one instance under the same loads, through both frontends: measures failures and how fast the balancer routes around; no acknowledged write is lost', async () => {
  const victim: Name = 'b';
  const loads = startLoads('kill9', { count: KILL_LOAD_COUNT });
  await new Promise((wake) => setTimeout(wake, 5_000));
  const killedAt = Date.now();
  instances[victim].kill('SIGKILL');
  await instances[victim].exited;
  await balancerSees(victim, 'DOWN');
  const markedDownAfterMs = Date.now() - killedAt;
  const results = await loads.done();
  await startInstance(victim);
  await balancerSees(victim, 'UP');
  for (const result of results) {
    const failed = result.outcomes.filter(isFailure);
    const lastFailureAfterMs = failed.length ? Math.max(...failed.map((o) => o.answeredAt)) - killedAt : null;
    report(`kill -9 of ${victim} through the ${result.frontend} frontend (${retries(result.frontend)})`, {
      ...figures(result, killedAt),
      markedDownAfterMs,
      lastFailureAfterMs,
    });
    expectAcknowledgedStoredOnce(result.outcomes, result.stored);
  }
}, 120_000);

it('the logs of every instance started hold no error, through PgBouncer, restarts included', () => {
  const problems = everyProcess.flatMap((service) => loggedErrors(service, /Database connection lost/));
  const lines = everyProcess.reduce((n, service) => n + service.lines.length, 0);
  report('log lines checked', { processes: everyProcess.length, lines, problems: problems.length });
  expect(problems).toEqual([]);
});
