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
  startHaproxy,
  startPgBouncer,
  startPostgres,
} from '../support/fleet/debian-services.js';
import { Outcome, startLoad, summarise } from '../support/fleet/load.js';
import { pollUntil } from '../support/poll.js';
import { startRedisServer, RedisServer } from '../support/redis-server.js';
import { ServiceProcess, startService } from '../support/service-process.js';

/**
 * A fleet as operators run it, from Debian's packages on 127.0.0.1: PostgreSQL, PgBouncer in transaction mode,
 * Redis, HAProxy health-checking /health/ready, and three instances of the built service sharing
 * CURSOR_SECRET, REDIS_URL and the database through PgBouncer. Migrations run once, directly against
 * PostgreSQL. The figures are printed (docs/operating.md, "Running several instances", quotes them).
 */

/** The roles compose/roles.sh makes: the service's (rows only, with the requests' timeouts) and the owner's. */
const APP_ROLE = 'animal_store_api';
const OWNER_ROLE = 'animal_store_owner';
const DATABASE = 'animal_store';
const KEY = 'fleet-test-key-0123456789abcdef';
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

const report = (title: string, figures: unknown) =>
  process.stdout.write(`fleet: ${title}: ${JSON.stringify(figures)}\n`);

let postgres: PostgresCluster;
let bouncer: PgBouncer;
let redis: RedisServer;
let balancer: Balancer;
let admin: pg.Client;
/** The database's role settings (with their row versions) as compose/roles.sh left them, before any instance. */
let madeByRoles: unknown[];
const roleSettings = async () =>
  (
    await sql.query<{ role: string; setconfig: string[]; version: string }>(
      `SELECT s.setrole::regrole::text AS role, s.setconfig, s.xmin::text AS version
       FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
       WHERE d.datname = current_database() ORDER BY 1`,
    )
  ).rows;
/** The service's database, directly (not through PgBouncer): what was stored. */
let sql: pg.Client;
const ports = {} as Record<Name, number>;
const instances = {} as Record<Name, ServiceProcess>;
/** Every process the test started, restarts included: their logs are checked at the end. */
const everyProcess: ServiceProcess[] = [];

function instanceEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
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
  };
}

async function startInstance(name: Name): Promise<ServiceProcess> {
  const service = await startService(instanceEnv(bouncer.url(DATABASE, APP_ROLE)), { port: ports[name] });
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
const createBody = (name: string) => JSON.stringify({ name, categoryId: 1 });
const migrate = (databaseUrl: string) =>
  run(process.execPath, ['dist/src/cli/migrations.js', 'run'], {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: databaseUrl,
  });
const apikey = (...args: string[]) =>
  run(process.execPath, ['dist/src/cli/apikey.js', ...args], {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: bouncer.url(DATABASE, APP_ROLE),
    MIGRATIONS_RUN: 'false',
  });

beforeAll(async () => {
  await ensureBuilt();
  postgres = await startPostgres();
  admin = new pg.Client({ connectionString: postgres.url() });
  await admin.connect();
  // The roles as in production, by the script Compose and the Kubernetes roles Job run (passwords unused: trust).
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  const secrets = await mkdtemp(join(tmpdir(), 'fleet-roles-'));
  for (const name of ['postgres', 'owner', 'api']) await writeFile(join(secrets, `${name}-password`), 'unused');
  const server = new URL(postgres.url());
  const roles = await run('bash', ['compose/roles.sh'], {
    PATH: process.env.PATH ?? '',
    PGHOST: server.hostname,
    PGPORT: server.port,
    PGUSER: 'postgres',
    PGDATABASE: DATABASE,
    POSTGRES_PASSWORD_FILE: join(secrets, 'postgres-password'),
    SECRETS_DIR: secrets,
  });
  await rm(secrets, { recursive: true });
  expect(roles).toMatchObject({ code: 0, stdout: expect.stringContaining(`${OWNER_ROLE} and ${APP_ROLE} ready`) });
  sql = new pg.Client({ connectionString: postgres.url(DATABASE) });
  await sql.connect();
  madeByRoles = await roleSettings();
  redis = await startRedisServer();

  const migrated = await migrate(postgres.url(DATABASE, OWNER_ROLE));
  expect(migrated).toMatchObject({
    code: 0,
    stdout: expect.stringMatching(
      new RegExp(`^Applied ${MIGRATIONS.map((migration) => migration.name).join(', ')} on `),
    ),
  });

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
  await admin?.end();
  await sql?.end();
  await bouncer?.stop();
  await redis?.stop();
  await postgres?.stop();
}, 60_000);

describe('a fleet through PgBouncer in transaction mode', () => {
  it("keeps the service's role's statement and idle-in-transaction timeouts: a slow statement is cancelled through PgBouncer", async () => {
    const client = new pg.Client({ connectionString: bouncer.url(DATABASE, APP_ROLE) });
    await client.connect();
    try {
      const shown = async (setting: string) =>
        (await client.query<Record<string, string>>(`SHOW ${setting}`)).rows[0][setting];
      expect(await shown('statement_timeout')).toBe(`${SESSION_TIMEOUTS.statement_timeout / 1000}s`);
      expect(await shown('idle_in_transaction_session_timeout')).toBe(
        `${SESSION_TIMEOUTS.idle_in_transaction_session_timeout / 1000}s`,
      );
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
    await admin.query(`CREATE DATABASE migrate_race OWNER ${OWNER_ROLE}`);
    const runners = await Promise.all(
      Array.from({ length: 4 }, () => migrate(bouncer.url('migrate_race', OWNER_ROLE))),
    );
    report(
      '4 migration runners at once through PgBouncer',
      runners.map((r) => `exit ${r.code}: ${r.stdout.trim() || r.stderr.trim()}`),
    );
    expect(runners.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    expect(runners.filter((r) => /^Applied CreatePets/.test(r.stdout))).toHaveLength(1);
    expect(runners.filter((r) => /^No pending migrations on /.test(r.stdout))).toHaveLength(3);
  }, 120_000);
});

describe('guarantees across instances', () => {
  it('a cursor issued by one instance works on another', async () => {
    for (const name of ['cursor-1', 'cursor-2', 'cursor-3']) {
      const created = await fetch(`${instances.a.origin}/v1/pets`, {
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/json' },
        body: createBody(name),
      });
      expect(created.status).toBe(201);
    }
    const first = await fetch(`${instances.a.origin}/v1/pets?limit=1`, { headers: bearer() });
    const link = first.headers.get('link');
    expect(link).toMatch(/cursor=/);
    const next = /<([^>]+)>/.exec(link!)![1];
    const second = await fetch(new URL(next, `${instances.b.origin}/v1/pets`), { headers: bearer() });
    const [firstPet] = (await first.json()) as { id: number }[];
    const secondPage = (await second.json()) as { id: number }[];
    report('cursor from a used on b', {
      status: second.status,
      firstPageId: firstPet.id,
      nextPageId: secondPage[0]?.id,
    });
    expect(second.status).toBe(200);
    expect(secondPage[0].id).toBeGreaterThan(firstPet.id);
  });

  it('the per-key budget is shared: 12 + 12 requests over two instances with a budget of 20 give exactly 4 refusals', async () => {
    const url = bouncer.url(DATABASE, APP_ROLE);
    const pair = [
      await startService(instanceEnv(url, { RATE_LIMIT_PER_MINUTE: '20' })),
      await startService(instanceEnv(url, { RATE_LIMIT_PER_MINUTE: '20' })),
    ];
    everyProcess.push(...pair);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 24; i += 1) {
        const response = await fetch(`${pair[i % 2].origin}/v1/pets?limit=1`, { headers: bearer(BUDGET_KEY) });
        await response.arrayBuffer();
        statuses.push(response.status);
      }
      const refusals = statuses.filter((status) => status === 429).length;
      report('shared budget of 20, 12 + 12 requests', { ok: statuses.filter((s) => s === 200).length, refusals });
      expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true);
      expect(refusals).toBe(4);
    } finally {
      for (const service of pair) service.kill('SIGTERM');
      await Promise.all(pair.map((service) => service.exited));
    }
  }, 120_000);

  it('a key revoked with the CLI is refused by every instance within the documented time', async () => {
    const created = await apikey('create', 'fleet-revocation');
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    for (const name of NAMES) {
      expect((await fetch(`${instances[name].origin}/v1/pets?limit=1`, { headers: bearer(key) })).status).toBe(200);
    }
    const revoked = await apikey('revoke', key.slice(0, 12));
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
    report(
      'revoked key refused after (ms, from the CLI exit)',
      Object.fromEntries(NAMES.map((n, i) => [n, refusedAfter[i]])),
    );
    // Documented: within KEY_CACHE_TTL_MS of the revocation (the CLI's own exit comes after it).
    for (const elapsed of refusedAfter) expect(elapsed).toBeLessThanOrEqual(KEY_CACHE_TTL_MS);
  }, 60_000);

  it('an Idempotency-Key create sent to one instance and repeated on another returns the same animal, one row', async () => {
    const init = {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json', 'idempotency-key': 'fleet-idempotent-1' },
      body: createBody('fleet-idempotent'),
    };
    const first = await fetch(`${instances.a.origin}/v1/pets`, init);
    const again = await fetch(`${instances.c.origin}/v1/pets`, init);
    const [firstBody, againBody] = [await first.json(), await again.json()];
    const count = Number(
      (await sql.query<{ count: string }>("SELECT count(*) FROM pets WHERE name = 'fleet-idempotent'")).rows[0].count,
    );
    report('Idempotency-Key create on a, repeated on c', {
      first: first.status,
      repeated: again.status,
      replayed: again.headers.get('idempotent-replayed'),
      rows: count,
    });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(againBody).toEqual(firstBody);
    expect(count).toBe(1);
  });
});

/** The animals stored under `prefix`: name -> how many rows. */
async function storedCreates(prefix: string): Promise<Map<string, number>> {
  const { rows } = await sql.query<{ name: string; count: string }>(
    'SELECT name, count(*) FROM pets WHERE starts_with(name, $1) GROUP BY name',
    [`${prefix}-`],
  );
  return new Map(rows.map((row) => [row.name, Number(row.count)]));
}

interface Restart {
  name: Name;
  /** From SIGTERM: when the balancer had marked it down (both backends), when it exited, when it was up again. */
  downAfterMs: number;
  exitedAfterMs: number;
  exitCode: number | null;
  upAgainAfterMs: number;
}

/** SIGTERM, wait for the balancer to take it out and for the exit, start it again, wait until the balancer has it back. */
async function restart(name: Name): Promise<Restart> {
  const service = instances[name];
  const signalledAt = Date.now();
  service.kill('SIGTERM');
  let exitedAt = 0;
  const exited = service.exited.then((exit) => ((exitedAt = Date.now()), exit));
  await balancerSees(name, 'DOWN');
  const downAt = Date.now();
  const exit = await Promise.race([exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000))]);
  if (!exit) throw new Error(`instance ${name} did not exit within 30 s of SIGTERM`);
  await startInstance(name);
  await balancerSees(name, 'UP');
  return {
    name,
    downAfterMs: downAt - signalledAt,
    exitedAfterMs: exitedAt - signalledAt,
    exitCode: exit.code,
    upAgainAfterMs: Date.now() - signalledAt,
  };
}

const FRONTENDS = ['retrying', 'strict'] as const;
type Frontend = (typeof FRONTENDS)[number];
const retries = (frontend: Frontend) => `LB retries ${frontend === 'retrying' ? 'on' : 'off'}`;

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
    /** Each frontend's outcomes, with the creates it had acknowledged and the rows stored under its prefix. */
    done: async () => {
      const outcomes = await Promise.all(loads.map((load) => load.done));
      return Promise.all(
        FRONTENDS.map(async (frontend, i) => {
          const acknowledged = outcomes[i].filter((o) => o.operation === 'create' && o.status === 201);
          const stored = await storedCreates(`${prefix}-${frontend}`);
          return {
            frontend,
            outcomes: outcomes[i],
            failed: outcomes[i].filter((o) => o.status === undefined || o.status < 200 || o.status > 299),
            acknowledged,
            stored,
            rows: {
              rowsStored: stored.size,
              duplicatedRows: [...stored.values()].filter((count) => count > 1).length,
              acknowledgedMissing: acknowledged.filter((o) => !stored.has(o.name!)).length,
            },
          };
        }),
      );
    },
  };
}

/** One rolling restart of the three instances under both frontends' loads: each frontend's outcome. */
async function rollingRestartUnderLoad() {
  // Runs on past LOAD_COUNT while a slow machine is still restarting: every restart happens under load.
  const loads = startLoads('roll', { count: LOAD_COUNT, maxCount: MAX_LOAD_COUNT });
  const loadStarted = Date.now();
  await new Promise((wake) => setTimeout(wake, 3_000));
  const restarts: Restart[] = [];
  try {
    for (const name of NAMES) restarts.push(await restart(name));
    await new Promise((wake) => setTimeout(wake, 2_000));
  } finally {
    loads.finish();
  }
  const restartsDoneAfterMs = Date.now() - loadStarted;
  const [retrying, strict] = await loads.done();
  const timing = { loadMs: Date.now() - loadStarted, restartsDoneAfterMs, restarts };
  return {
    retrying: rollingRestartOutcome(retrying, loadStarted, timing),
    strict: rollingRestartOutcome(strict, loadStarted, timing),
  };
}

/** One frontend's figures, printed, beside what the assertions read. */
function rollingRestartOutcome(
  { frontend, outcomes, failed, acknowledged, stored, rows }: LoadResult,
  loadStarted: number,
  timing: { loadMs: number; restartsDoneAfterMs: number; restarts: Restart[] },
) {
  const figures = {
    ...summarise(outcomes),
    ...timing,
    ...rows,
    failures: failed.map((o) => `${o.operation} ${o.status ?? o.error} at ${o.sentAt - loadStarted} ms`),
  };
  report(`rolling restart through the ${frontend} frontend (${retries(frontend)})`, figures);
  return { outcomes, figures, acknowledged, stored };
}
type LoadResult = Awaited<ReturnType<ReturnType<typeof startLoads>['done']>>[number];
type RollingRestart = ReturnType<typeof rollingRestartOutcome>;

function expectZeroClientVisibleFailures({ outcomes, figures, acknowledged, stored }: RollingRestart) {
  expect(figures.restartsDoneAfterMs).toBeLessThan(figures.loadMs);
  for (const restarted of figures.restarts) {
    expect(restarted.exitCode).toBe(0);
    // The balancer took it out while it still served (the drain delay), not by finding it gone.
    expect(restarted.downAfterMs).toBeLessThan(restarted.exitedAfterMs);
  }
  expect(figures.requests).toBeGreaterThanOrEqual(LOAD_COUNT);
  expect(figures.connectionFailures).toEqual({});
  expect(outcomes.filter((o: Outcome) => o.status! < 200 || o.status! > 299)).toEqual([]);
  // Every create was acknowledged, each is stored exactly once.
  expect(acknowledged.length).toBe(figures.creates);
  expect(stored.size).toBe(acknowledged.length);
  expect(figures.duplicatedRows).toBe(0);
  expect(figures.acknowledgedMissing).toBe(0);
}

// One rolling restart serves both frontends' cases: the same restarts, each frontend under its own load.
describe('rolling restart under load (about 50 requests/s through each frontend for about 25 s through HAProxy)', () => {
  let outcome: Record<Frontend, RollingRestart>;
  beforeAll(async () => {
    outcome = await rollingRestartUnderLoad();
  }, 240_000);

  it('with balancer retries on safe requests: every request 2xx, no resets, every 201 stored once', () => {
    expectZeroClientVisibleFailures(outcome.retrying);
  });

  it('with balancer retries off: every request 2xx, no resets, every 201 stored once', () => {
    expectZeroClientVisibleFailures(outcome.strict);
  });
});

describe('kill -9 of one instance under the same loads', () => {
  it('through both frontends: measures failures and how fast the balancer routes around; no acknowledged write is lost', async () => {
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
    for (const { frontend, outcomes, failed, rows } of results) {
      const figures = {
        ...summarise(outcomes),
        markedDownAfterMs,
        lastFailureAfterMs: failed.length ? Math.max(...failed.map((o) => o.answeredAt)) - killedAt : null,
        failures: failed.map((o) => `${o.operation} ${o.status ?? o.error}`),
        ...rows,
      };
      report(`kill -9 of ${victim} through the ${frontend} frontend (${retries(frontend)})`, figures);
      expect(figures.acknowledgedMissing).toBe(0);
      expect(figures.duplicatedRows).toBe(0);
    }
  }, 120_000);
});

describe('the logs of every instance started', () => {
  it('hold no error, through PgBouncer, restarts included', () => {
    const problems = everyProcess.flatMap((service) => [
      ...service.stderr,
      ...service.lines.filter((line) => {
        try {
          const entry = JSON.parse(line) as { level?: number; msg?: string };
          return (entry.level ?? 0) >= 50 || /Database connection lost/.test(entry.msg ?? '');
        } catch {
          return true;
        }
      }),
    ]);
    report('log lines checked', {
      processes: everyProcess.length,
      lines: everyProcess.reduce((n, s) => n + s.lines.length, 0),
      problems: problems.length,
    });
    expect(problems).toEqual([]);
  });
});
