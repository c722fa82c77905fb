import { expect } from '@jest/globals';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { RETRY_AFTER_SECONDS } from '../../src/edge/errors/to-api-error.js';
import {
  APP_ROLE,
  DATABASE,
  PatroniCluster,
  PatroniNode,
  PG_BIN,
  startPatroniCluster,
  startServiceOnCluster,
  TEST_SETTINGS as SETTINGS,
} from '../support/fleet/patroni-cluster.js';
import { runOnce, workDirectory } from '../support/fleet/debian-services.js';
import { Load, Outcome, startLoad, summarise } from '../support/fleet/load.js';
import { pollUntil } from '../support/poll.js';
import { ServiceProcess } from '../support/service-process.js';

/**
 * A PostgreSQL failover under the built service, from Debian's packages on 127.0.0.1: two Patroni nodes
 * (PostgreSQL 15, synchronous mode), one etcd, and HAProxy leading to the node whose Patroni answers `/primary`.
 * The service's DATABASE_URL is HAProxy's address, as an operator's would be. Under steady load (half creates),
 * a planned switchover and then the crash (`kill -9`) of the primary's Patroni and PostgreSQL are each measured:
 * clients get only 2xx or the service's own 503 with Retry-After, the window is printed and bounded, writes come
 * back with no restart, every acknowledged create is stored once, and nothing is logged at error level. The
 * figures are printed (docs/operating.md, "High availability", quotes them).
 *
 * Every node archives its WAL with pgBackRest throughout. After both failovers, on the promoted node: a full
 * backup, animals created under load, then an operator's mistaken `DELETE FROM pets`; the archive
 * restored aside to the moment before it holds every row as it was, and the operator's copy back brings them to
 * the service. The loss window (the DELETE's WAL archived) and the restore's duration are printed
 * ("Backups and restore").
 */

const KEY = 'failover-test-key-0123456789abcdef';
/** The service's wait for a database connection (src/database/data-source-options.ts). */
const CONNECT_TIMEOUT_MS = 2_000;
/** HAProxy's detection: `fall` failed checks, then `rise` passed ones for the new primary. */
const HAPROXY_DETECTION_MS = SETTINGS.interMs * (SETTINGS.fall + SETTINGS.rise);
// The bounds carry wide margins: on a machine whose two cores are shared with other test runs, Patroni's own steps
// (the old primary's checkpoint and shutdown, the promotion) slow down several times over.
/** Planned switchover: Patroni demotes and promotes at once; HAProxy and a connect timeout add to it. */
const SWITCHOVER_BOUND_MS = HAPROXY_DETECTION_MS + CONNECT_TIMEOUT_MS + 20_000;
/** Crash: the leader key lives ttl, the standby notices within loop_wait, then HAProxy and a connect timeout. */
const CRASH_BOUND_MS = (SETTINGS.ttl + SETTINGS.loopWait) * 1000 + HAPROXY_DETECTION_MS + CONNECT_TIMEOUT_MS + 15_000;
const LOAD_RATE = 40;
/** Half the requests create (each with an Idempotency-Key), the rest read. */
const MIX = ['create', 'list', 'create', 'get'] as const;
/** Steady load before the fault, and after writes came back. */
const STEADY_REQUESTS = 3 * LOAD_RATE;
/** How long a case may run at most: the load stops there whatever happens. */
const MAX_LOAD_MS = 90_000;

const report = (title: string, figures: unknown) =>
  process.stdout.write(`failover: ${title}: ${JSON.stringify(figures)}\n`);

let cluster: PatroniCluster | undefined;
let service: ServiceProcess | undefined;
let serviceExited = false;

const bearer = { authorization: `Bearer ${KEY}` };

beforeAll(async () => {
  cluster = await startPatroniCluster(SETTINGS);
  service = await startServiceOnCluster(cluster, { API_KEYS: KEY });
  void service.exited.then(() => (serviceExited = true));
}, 240_000);

afterAll(async () => {
  if (service && !serviceExited) {
    service.kill('SIGKILL');
    await service.exited;
  }
  await cluster?.stop();
}, 60_000);

/** One query on a connection of its own, through HAProxy: a failover closes connections to the old primary. */
async function query<Row extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<Row[]> {
  const client = new pg.Client({ connectionString: cluster!.url(DATABASE), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function storedCounts(prefix: string): Promise<Map<string, number>> {
  const rows = await query<{ name: string; count: string }>(
    'SELECT name, count(*) FROM pets WHERE starts_with(name, $1) GROUP BY name',
    [`${prefix}-`],
  );
  return new Map(rows.map((row) => [row.name, Number(row.count)]));
}

interface ReadinessSample {
  at: number;
  status: number | null;
}

/** `/health/ready` every 250 ms until stopped: what a Kubernetes readiness probe would see during the failover. */
function sampleReadiness() {
  const samples: ReadinessSample[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const at = Date.now();
      const status = await fetch(`${service!.origin}/health/ready`, { signal: AbortSignal.timeout(5_000) }).then(
        async (response) => (await response.arrayBuffer(), response.status),
        () => null,
      );
      samples.push({ at, status });
      await new Promise((wake) => setTimeout(wake, 250));
    }
  })();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

const isFailure = (o: Outcome) => o.status === undefined || o.status < 200 || o.status > 299;

/** Resolves once `count` more requests were answered. */
const answeredMore = (load: Load, count: number, what: string) => {
  const target = load.outcomes.length + count;
  return pollUntil(() => load.outcomes.length >= target, { timeoutMs: 60_000, intervalMs: 50, what });
};

interface Measured {
  outcomes: Outcome[];
  figures: Record<string, unknown> & { windowMs: number };
  acknowledged: string[];
  stored: Map<string, number>;
}

/**
 * Steady load, then `fault(load)`, then waits until HAProxy leads to `newPrimary` and a create sent after that was
 * acknowledged, then steady load again; `/health/ready` is sampled throughout. Every wait is bounded.
 */
async function underLoad(
  prefix: string,
  newPrimary: PatroniNode,
  fault: (load: Load) => Promise<unknown>,
): Promise<Measured & { readiness: ReadinessSample[]; faultAt: number }> {
  const load = startLoad({
    origin: service!.origin,
    key: KEY,
    prefix,
    ratePerSecond: LOAD_RATE,
    count: 2 * STEADY_REQUESTS,
    maxCount: (LOAD_RATE * MAX_LOAD_MS) / 1000,
    mix: MIX,
  });
  const readiness = sampleReadiness();
  let faultAt = 0;
  try {
    await answeredMore(load, STEADY_REQUESTS, 'steady load before the fault');
    faultAt = Date.now();
    await fault(load);
    await pollUntil(async () => (await cluster!.haproxyStates())[newPrimary.name] === 'UP', {
      timeoutMs: CRASH_BOUND_MS + 30_000,
      intervalMs: 100,
      what: `HAProxy to lead to ${newPrimary.name} (${cluster!.output()})`,
    });
    const routedAt = Date.now();
    await pollUntil(
      () => load.outcomes.some((o) => o.operation === 'create' && o.status === 201 && o.sentAt >= routedAt),
      { timeoutMs: 60_000, intervalMs: 50, what: 'a create acknowledged after the new primary was routed' },
    );
    await answeredMore(load, STEADY_REQUESTS, 'steady load after the failover');
  } finally {
    load.finish();
    await readiness.stop();
  }
  const outcomes = await load.done;
  const stored = await storedCounts(prefix);
  const acknowledged = outcomes.filter((o) => o.operation === 'create' && o.status === 201).map((o) => o.name!);
  const failed = outcomes.filter(isFailure);
  const firstFailure = failed.length ? Math.min(...failed.map((o) => o.sentAt)) : null;
  const lastFailure = failed.length ? Math.max(...failed.map((o) => o.answeredAt)) : null;
  const writesAgain = outcomes
    .filter((o) => o.operation === 'create' && o.status === 201 && o.sentAt > (lastFailure ?? faultAt))
    .map((o) => o.answeredAt);
  const unready = readiness.samples.filter((s) => s.status !== 200);
  const figures = {
    ...summarise(outcomes),
    loadMs: Math.max(...outcomes.map((o) => o.answeredAt)) - Math.min(...outcomes.map((o) => o.sentAt)),
    // From the first failed request's sending to the last failure's answer: what a client saw.
    windowMs: firstFailure === null ? 0 : lastFailure! - firstFailure,
    firstFailureAfterFaultMs: firstFailure === null ? null : firstFailure - faultAt,
    writesAgainAfterFaultMs: writesAgain.length ? Math.min(...writesAgain) - faultAt : null,
    acknowledgedCreates: acknowledged.length,
    storedCreates: [...stored.values()].reduce((n, c) => n + c, 0),
    acknowledgedStoredOnce: acknowledged.filter((name) => stored.get(name) === 1).length,
    duplicatedRows: [...stored.values()].filter((count) => count > 1).length,
    storedUnacknowledged: [...stored.keys()].filter((name) => !acknowledged.includes(name)).length,
    readiness: {
      samples: readiness.samples.length,
      byStatus: countBy(readiness.samples.map((s) => String(s.status))),
      unreadyMs: unready.length ? Math.max(...unready.map((s) => s.at)) - Math.min(...unready.map((s) => s.at)) : 0,
    },
  };
  return { outcomes, figures, acknowledged, stored, readiness: readiness.samples, faultAt };
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function expectFailoverHeld(
  { outcomes, figures, acknowledged, stored, readiness }: Measured & { readiness: ReadinessSample[] },
  boundMs: number,
) {
  // Only 2xx and the service's own 503: no 500, no connection failure, no request left unanswered.
  expect(figures.connectionFailures).toEqual({});
  const failed = outcomes.filter(isFailure);
  expect(failed.filter((o) => o.status !== 503)).toEqual([]);
  for (const o of failed) {
    expect(JSON.parse(o.failure!.body)).toMatchObject({
      code: 'service_unavailable',
      message: expect.any(String),
      status: 503,
    });
    expect(o.failure!.retryAfter).toBe(RETRY_AFTER_SECONDS);
  }
  expect(figures.windowMs).toBeLessThan(boundMs);
  // Writes came back without a restart: the same process acknowledged creates after the last failure.
  expect(serviceExited).toBe(false);
  expect(figures.writesAgainAfterFaultMs).not.toBeNull();
  // Every acknowledged create is stored exactly once; nothing is stored twice.
  expect(acknowledged.length).toBeGreaterThan(0);
  expect(acknowledged.filter((name) => stored.get(name) !== 1)).toEqual([]);
  expect(figures.duplicatedRows).toBe(0);
  // Readiness stayed 200 throughout (READINESS_OUTAGE_GRACE_MS exceeds the window): a fleet stays in the balancer.
  expect(readiness.length).toBeGreaterThan(0);
  expect(readiness.filter((sample) => sample.status !== 200)).toEqual([]);
  expectNoErrorLogged();
}

function expectNoErrorLogged() {
  const errors = service!.lines.filter((line) => {
    try {
      return ((JSON.parse(line) as { level?: number }).level ?? 0) >= 50;
    } catch {
      return true;
    }
  });
  expect({ errors, stderr: service!.stderr }).toEqual({ errors: [], stderr: [] });
}

interface RetriedCreate {
  /** Each attempt's answer before the last: `503`, or `lost: <error>` for a connection that failed. */
  attempts: string[];
  finalStatus: number;
  /** The same request once more after the answer: replayed, not created again. */
  replayedStatus: number;
  replayed: string | null;
  rows: number;
  tookMs: number;
}
let crashRetry: RetriedCreate | undefined;

/**
 * What a careful client does: a create with an Idempotency-Key, sent again with the same key after a 503 (waiting
 * Retry-After) or a lost connection, until it is answered otherwise; bounded.
 */
async function createUntilAnswered(name: string): Promise<RetriedCreate> {
  const started = Date.now();
  const send = () =>
    fetch(`${service!.origin}/v1/pets`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json', 'idempotency-key': name },
      body: JSON.stringify({ name, categoryId: 1 }),
      signal: AbortSignal.timeout(15_000),
    });
  const attempts: string[] = [];
  for (;;) {
    if (Date.now() - started > CRASH_BOUND_MS + 30_000)
      throw new Error(`no answer but 503 after ${attempts.length} attempts`);
    let wait = 200;
    try {
      const response = await send();
      await response.arrayBuffer();
      if (response.status !== 503) {
        const again = await send();
        await again.arrayBuffer();
        const rows = await rowsNamed(name);
        return {
          attempts,
          finalStatus: response.status,
          replayedStatus: again.status,
          replayed: again.headers.get('idempotent-replayed'),
          rows,
          tookMs: Date.now() - started,
        };
      }
      attempts.push('503');
      wait = Number(response.headers.get('retry-after') ?? '1') * 1000;
    } catch (error) {
      attempts.push(`lost: ${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name}`);
    }
    await new Promise((wake) => setTimeout(wake, wait));
  }
}

async function rowsNamed(name: string): Promise<number> {
  const rows = await query<{ count: string }>('SELECT count(*) FROM pets WHERE name = $1', [name]);
  return Number(rows[0].count);
}

describe('a PostgreSQL failover under load (Patroni, synchronous mode, HAProxy on /primary)', () => {
  it(`planned switchover: only 2xx and 503 with Retry-After, a window under ${SWITCHOVER_BOUND_MS} ms, every acknowledged create stored once`, async () => {
    const from = (await cluster!.primary())!;
    const to = cluster!.nodes.find((node) => node !== from)!;
    await cluster!.waitForSyncStandby(to);
    let switched: { status: number; body: string } | undefined;
    const measured = await underLoad('switchover', to, async () => {
      switched = await cluster!.switchover(from, to);
    });
    report(`planned switchover ${from.name} -> ${to.name} (Patroni's answer: ${switched?.status})`, measured.figures);
    expect(switched?.status).toBe(200);
    expectFailoverHeld(measured, SWITCHOVER_BOUND_MS);
  }, 180_000);

  it(`kill -9 of the primary's Patroni and PostgreSQL: only 2xx and 503 with Retry-After, a window under ${CRASH_BOUND_MS} ms, every acknowledged create stored once`, async () => {
    const victim = (await cluster!.primary())!;
    const survivor = cluster!.nodes.find((node) => node !== victim)!;
    // Only a synchronous standby may be promoted in synchronous mode: the old primary must have caught up.
    await cluster!.waitForSyncStandby(survivor);
    let retry: Promise<typeof crashRetry> | undefined;
    const measured = await underLoad('crash', survivor, async (load) => {
      const crashedAt = Date.now();
      await cluster!.crash(victim);
      // A client whose create falls in the failover: it sends it once the service answers others 503.
      retry = pollUntil(() => load.outcomes.some((o) => o.status === 503 && o.sentAt >= crashedAt), {
        timeoutMs: CRASH_BOUND_MS,
        intervalMs: 20,
        what: 'the service to answer 503 after the crash',
      }).then(() => createUntilAnswered('crash-retried-idempotently'));
      // The retrying client runs beside the wait for the new primary; its result is awaited below.
      retry.catch(() => undefined);
    });
    crashRetry = await retry;
    report(`kill -9 of ${victim.name}'s Patroni and PostgreSQL, ${survivor.name} promoted`, measured.figures);
    expectFailoverHeld(measured, CRASH_BOUND_MS);
  }, 240_000);

  it('a create with an Idempotency-Key that failed mid-failover, retried with the same key until answered, stores exactly one animal', () => {
    report('idempotent create retried across the crash', crashRetry);
    expect(crashRetry).toBeDefined();
    // The first attempt fell in the failover: a 503 or a lost connection, never a 500.
    expect(crashRetry!.attempts[0]).toMatch(/^(503|lost: .+)$/);
    expect(crashRetry!.attempts.slice(0, -1).every((a) => /^(503|lost: .+)$/.test(a))).toBe(true);
    expect(crashRetry!.finalStatus).toBe(201);
    expect(crashRetry!.replayedStatus).toBe(201);
    expect(crashRetry!.rows).toBe(1);
  });

  it('the service logged nothing at error level, through both failovers', () => {
    const warnings = service!.lines.flatMap((line) => {
      const entry = JSON.parse(line) as { level?: number; context?: string; msg?: string };
      return entry.level === 40 ? [`${entry.context ?? ''}: ${(entry.msg ?? '').slice(0, 100)}`] : [];
    });
    report('service log lines checked', {
      lines: service!.lines.length,
      stderr: service!.stderr.length,
      warnings: countBy(warnings),
    });
    expectNoErrorLogged();
  });
});

/** The animals the point-in-time case creates under load before the mistake, and its requests a second. */
const PITR_CREATES = 200;
const PITR_LOAD_RATE = 100;
/** A commit's segment is switched within archive_timeout, then pushed; the bound leaves room for a busy machine. */
const ARCHIVE_LAG_BOUND_MS = (SETTINGS.archiveTimeout + 20) * 1000;

/** Every row of `pets`, in order, as PostgreSQL's JSON: compared whole, field for field. */
async function petsTable(url: string): Promise<{ rows: number; json: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const [row] = (
      await client.query<{ rows: string; json: string | null }>(
        'SELECT count(*) AS rows, json_agg(p ORDER BY p.id)::text AS json FROM pets p',
      )
    ).rows;
    return { rows: Number(row.rows), json: row.json ?? '[]' };
  } finally {
    await client.end();
  }
}

/**
 * The operator's copy back (docs/operating.md, "Backups and restore"): the restored rows out with `\copy`, then
 * into the live table in one transaction, keeping their ids and skipping any row the table still has.
 */
async function copyPetsBack(restoredUrl: string, liveUrl: string): Promise<void> {
  const dir = await workDirectory('pitr-copy');
  try {
    const file = join(dir, 'pets-restored.csv');
    const psql = (url: string, args: string[]) =>
      runOnce(join(PG_BIN, 'psql'), [url, '-v', 'ON_ERROR_STOP=1', ...args]);
    const out = await psql(restoredUrl, ['-c', `\\copy pets TO '${file}' CSV`]);
    expect(out).toMatchObject({ code: 0 });
    const script = join(dir, 'copy-back.sql');
    await writeFile(
      script,
      [
        'BEGIN;',
        'CREATE TEMPORARY TABLE restored_pets (LIKE pets) ON COMMIT DROP;',
        `\\copy restored_pets FROM '${file}' CSV`,
        'INSERT INTO pets OVERRIDING SYSTEM VALUE SELECT * FROM restored_pets ON CONFLICT (id) DO NOTHING;',
        'COMMIT;',
        '',
      ].join('\n'),
    );
    const back = await psql(liveUrl, ['-f', script]);
    expect(back).toMatchObject({ code: 0, output: expect.stringContaining(`INSERT 0 `) });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('continuous archiving and point-in-time recovery (pgBackRest, WAL archived from every node)', () => {
  it(`a restore to the moment before a mistaken DELETE FROM pets brings back all ${PITR_CREATES} animals created under load, field for field`, async () => {
    const primary = (await cluster!.primary())!;
    // pgBackRest restores from the newest backup that stopped before the target, counted in whole seconds: the
    // backup ends before the animals are created.
    const backup = await cluster!.archive.backup();
    const backupSizes = /database size: .*/.exec(await cluster!.archive.info())?.[0];
    const load = startLoad({
      origin: service!.origin,
      key: KEY,
      prefix: 'pitr',
      ratePerSecond: PITR_LOAD_RATE,
      count: 2 * PITR_CREATES,
      mix: ['create', 'list'],
    });
    const loaded = summarise(await load.done);
    expect(loaded).toMatchObject({ created201: PITR_CREATES, non2xx: 0 });
    expect((await storedCounts('pitr')).size).toBe(PITR_CREATES);
    const before = await petsTable(cluster!.url(DATABASE));

    // The moment to go back to, from the database's clock, and then the mistake, through the read-write address.
    const operator = new pg.Client({ connectionString: cluster!.url(DATABASE) });
    await operator.connect();
    let target: string;
    let deleted: number;
    let walFile: string;
    try {
      target = (await operator.query<{ now: string }>('SELECT clock_timestamp()::text AS now')).rows[0].now;
      deleted = (await operator.query('DELETE FROM pets')).rowCount ?? -1;
      walFile = (await operator.query<{ wal: string }>('SELECT pg_walfile_name(pg_current_wal_lsn()) AS wal')).rows[0]
        .wal;
    } finally {
      await operator.end();
    }
    const deletedAt = Date.now();
    const afterDelete = await petsTable(cluster!.url(DATABASE));

    // The loss window: until the segment holding the DELETE is in the repository, a loss of every node loses it.
    await pollUntil(
      async () => {
        const [row] = await query<{ last: string | null }>(
          'SELECT last_archived_wal AS last FROM pg_stat_archiver',
          [],
        );
        return row.last !== null && row.last >= walFile;
      },
      { timeoutMs: ARCHIVE_LAG_BOUND_MS, intervalMs: 100, what: `${walFile}, holding the DELETE, to be archived` },
    );
    const archiveLagMs = Date.now() - deletedAt;

    const restoreStarted = Date.now();
    const restored = await cluster!.archive.restoreToTime(target);
    let restoredTable: { rows: number; json: string };
    try {
      restoredTable = await petsTable(restored.url(DATABASE));
      await copyPetsBack(restored.url(DATABASE), cluster!.url(DATABASE, APP_ROLE));
    } finally {
      await restored.stop();
    }
    const restoredMs = Date.now() - restoreStarted;
    const afterRestore = await petsTable(cluster!.url(DATABASE));
    // The service serves them again: one of the animals created before the mistake, by its id.
    const [first] = (JSON.parse(before.json) as { id: number; name: string }[]).filter((p) =>
      p.name.startsWith('pitr-'),
    );
    const served = await fetch(`${service!.origin}/v1/pets/${first.id}`, { headers: bearer });
    const servedBody = (await served.json()) as { id: number; name: string };

    report(`point-in-time restore on ${primary.name} (archive_timeout ${SETTINGS.archiveTimeout} s)`, {
      load: { requests: loaded.requests, byStatus: loaded.byStatus },
      rows: {
        before: before.rows,
        afterDelete: afterDelete.rows,
        restoredCopy: restoredTable.rows,
        afterCopyBack: afterRestore.rows,
      },
      target,
      fullBackup: { ms: backup.durationMs, sizes: backupSizes },
      archiveLagMs,
      restoreMs: restored.restoreMs,
      recoveryMs: restored.recoveryMs,
      restoreToRowsBackMs: restoredMs,
    });
    expect(deleted).toBe(before.rows);
    expect(afterDelete.rows).toBe(0);
    expect(restoredTable).toEqual(before);
    expect(afterRestore).toEqual(before);
    expect({ status: served.status, id: servedBody.id, name: servedBody.name }).toEqual({
      status: 200,
      id: first.id,
      name: first.name,
    });
    expectNoErrorLogged();
  }, 240_000);
});
