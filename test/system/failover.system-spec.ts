import { expect } from '@jest/globals';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RETRY_AFTER_SECONDS } from '../../src/edge/errors/to-api-error.js';
import { pgProgram, queryOnce, runOnce, statusOf, workDirectory } from '../support/fleet/debian-services.js';
import {
  acknowledged,
  answeredMore,
  countBy,
  expectAcknowledgedStoredOnce,
  isFailure,
  Load,
  loggedErrors,
  reporter,
  startLoad,
  storedByName,
  summarise,
} from '../support/fleet/load.js';
import {
  APP_ROLE,
  DATABASE,
  PatroniCluster,
  PatroniNode,
  SETTINGS,
  startPatroniCluster,
  startServiceOnCluster,
} from '../support/fleet/patroni-cluster.js';
import { pollUntil } from '../support/poll.js';
import { ServiceProcess } from '../support/service-process.js';

/**
 * PostgreSQL failovers under load (a switchover, then `kill -9` of the primary), then a restore to the moment before a
 * mistaken `DELETE FROM pets`. docs/operating.md ("High availability", "Backups and restore") quotes the figures printed.
 */

const KEY = 'failover-test-key-0123456789abcdef';
/** The service's wait for a database connection (src/database/data-source-options.ts). */
const CONNECT_TIMEOUT_MS = 2_000;
/** HAProxy's detection: `fall` failed checks, then `rise` passed ones for the new primary. */
const HAPROXY_DETECTION_MS = SETTINGS.interMs * (SETTINGS.fall + SETTINGS.rise);
// Wide margins: on two shared cores Patroni's own steps (checkpoint, shutdown, promotion) slow down several times over.
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

const report = reporter('failover');

let cluster: PatroniCluster;
let service: ServiceProcess;
let serviceExited = false;
const bearer = { authorization: `Bearer ${KEY}` };
const database = () => cluster.url(DATABASE);

beforeAll(async () => {
  cluster = await startPatroniCluster();
  service = await startServiceOnCluster(cluster, { API_KEYS: KEY });
  void service.exited.then(() => (serviceExited = true));
}, 240_000);

afterAll(async () => {
  service?.kill('SIGKILL');
  await service?.exited;
  await cluster?.stop();
}, 60_000);

/** `/health/ready` every 250 ms until stopped: what a Kubernetes readiness probe would see during the failover. */
function sampleReadiness() {
  const samples: { at: number; status: number | null }[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const at = Date.now();
      samples.push({ at, status: await statusOf(`${service.origin}/health/ready`, 5_000) });
      await new Promise((wake) => setTimeout(wake, 250));
    }
  })();
  return { samples, stop: () => ((stopped = true), done) };
}

/** Steady load, `fault(load)`, HAProxy on `newPrimary` and a create acknowledged after it, steady load again. */
async function underLoad<T>(prefix: string, newPrimary: PatroniNode, fault: (load: Load) => Promise<T>) {
  const load = startLoad({
    origin: service.origin,
    key: KEY,
    prefix,
    ratePerSecond: LOAD_RATE,
    mix: MIX,
    count: 2 * STEADY_REQUESTS,
    maxCount: (LOAD_RATE * MAX_LOAD_MS) / 1000,
  });
  const readiness = sampleReadiness();
  let faultAt = 0;
  let faulted!: T;
  try {
    await answeredMore(load, STEADY_REQUESTS, { timeoutMs: 60_000, what: 'steady load before the fault' });
    faultAt = Date.now();
    faulted = await fault(load);
    await pollUntil(async () => (await cluster.haproxyStates())[newPrimary.name] === 'UP', {
      timeoutMs: CRASH_BOUND_MS + 30_000,
      intervalMs: 100,
      what: `HAProxy to lead to ${newPrimary.name} (${cluster.output()})`,
    });
    const routedAt = Date.now();
    await pollUntil(() => acknowledged(load.outcomes.filter((o) => o.sentAt >= routedAt)).length > 0, {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: 'a create acknowledged after the new primary was routed',
    });
    await answeredMore(load, STEADY_REQUESTS, { timeoutMs: 60_000, what: 'steady load after the failover' });
  } finally {
    load.finish();
    await readiness.stop();
  }
  const outcomes = await load.done;
  const stored = await storedByName(database(), prefix);
  const failed = outcomes.filter(isFailure);
  const firstFailure = failed.length ? Math.min(...failed.map((o) => o.sentAt)) : null;
  const lastFailure = failed.length ? Math.max(...failed.map((o) => o.answeredAt)) : null;
  const writesAgain = outcomes
    .filter((o) => o.operation === 'create' && o.status === 201 && o.sentAt > (lastFailure ?? faultAt))
    .map((o) => o.answeredAt);
  const unready = readiness.samples.filter((s) => s.status !== 200).map((s) => s.at);
  const figures = {
    ...summarise(outcomes),
    loadMs: Math.max(...outcomes.map((o) => o.answeredAt)) - Math.min(...outcomes.map((o) => o.sentAt)),
    // From the first failed request's sending to the last failure's answer: what a client saw.
    windowMs: firstFailure === null ? 0 : lastFailure! - firstFailure,
    firstFailureAfterFaultMs: firstFailure === null ? null : firstFailure - faultAt,
    writesAgainAfterFaultMs: writesAgain.length ? Math.min(...writesAgain) - faultAt : null,
    storedUnacknowledged: stored.size - acknowledged(outcomes).filter((name) => stored.has(name)).length,
    readiness: {
      samples: readiness.samples.length,
      byStatus: countBy(readiness.samples.map((s) => String(s.status))),
      unreadyMs: unready.length ? Math.max(...unready) - Math.min(...unready) : 0,
    },
  };
  return { outcomes, figures, stored, readiness: readiness.samples, faulted };
}

function expectFailoverHeld(
  { outcomes, figures, stored, readiness }: Awaited<ReturnType<typeof underLoad>>,
  boundMs: number,
) {
  // Only 2xx and the service's own 503 with Retry-After: no 500, no connection failure, no request left unanswered.
  const failed = outcomes.filter(isFailure);
  expect(
    failed.map((o) => ({ status: o.status, ...o.failure, body: o.failure && (JSON.parse(o.failure.body) as unknown) })),
  ).toMatchObject(
    failed.map(() => ({
      status: 503,
      retryAfter: RETRY_AFTER_SECONDS,
      body: { code: 'service_unavailable', message: expect.any(String), status: 503 },
    })),
  );
  expect(figures.windowMs).toBeLessThan(boundMs);
  // Writes came back without a restart: the same process acknowledged creates after the last failure.
  expect(serviceExited).toBe(false);
  expect(figures.writesAgainAfterFaultMs).not.toBeNull();
  expectAcknowledgedStoredOnce(outcomes, stored);
  // Readiness stayed 200 throughout (READINESS_OUTAGE_GRACE_MS exceeds the window): a fleet stays in the balancer.
  expect(readiness.length).toBeGreaterThan(0);
  expect(readiness.filter((sample) => sample.status !== 200)).toEqual([]);
  expect(loggedErrors(service)).toEqual([]);
}

/** A careful client: a create with an Idempotency-Key resent after a 503 or a lost connection, then once more. */
async function createUntilAnswered(name: string) {
  const started = Date.now();
  const send = () =>
    fetch(`${service.origin}/v1/pets`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json', 'idempotency-key': name },
      body: JSON.stringify({ name, categoryId: 1 }),
      signal: AbortSignal.timeout(15_000),
    });
  /** Each attempt's answer before the last: `503`, or `lost: <error>` for a connection that failed. */
  const attempts: string[] = [];
  while (Date.now() - started <= CRASH_BOUND_MS + 30_000) {
    let wait = 200;
    try {
      const response = await send();
      await response.arrayBuffer();
      if (response.status !== 503) {
        const again = await send();
        await again.arrayBuffer();
        const rows = (await storedByName(database(), 'crash-retried')).get(name) ?? 0;
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
  throw new Error(`no answer but 503 after ${attempts.length} attempts`);
}

describe('a PostgreSQL failover under load (Patroni, synchronous mode, HAProxy on /primary)', () => {
  it(`planned switchover: only 2xx and 503 with Retry-After, a window under ${SWITCHOVER_BOUND_MS} ms, every acknowledged create stored once`, async () => {
    const from = (await cluster.primary())!;
    const to = cluster.nodes.find((node) => node !== from)!;
    await cluster.waitForSyncStandby(to);
    const measured = await underLoad('switchover', to, () => cluster.switchover(from, to));
    report(
      `planned switchover ${from.name} -> ${to.name} (Patroni's answer: ${measured.faulted.status})`,
      measured.figures,
    );
    expect(measured.faulted.status).toBe(200);
    expectFailoverHeld(measured, SWITCHOVER_BOUND_MS);
  }, 180_000);

  it(`kill -9 of the primary's Patroni and PostgreSQL: only 2xx and 503 with Retry-After, a window under ${CRASH_BOUND_MS} ms, every acknowledged create stored once, one retried with its Idempotency-Key across the crash stored once`, async () => {
    const victim = (await cluster.primary())!;
    const survivor = cluster.nodes.find((node) => node !== victim)!;
    // Only a synchronous standby may be promoted in synchronous mode: the old primary must have caught up.
    await cluster.waitForSyncStandby(survivor);
    let retry: ReturnType<typeof createUntilAnswered> | undefined;
    const measured = await underLoad('crash', survivor, async (load) => {
      const crashedAt = Date.now();
      await cluster.crash(victim);
      // A client whose create falls in the failover: it sends it once the service answers others 503.
      retry = pollUntil(() => load.outcomes.some((o) => o.status === 503 && o.sentAt >= crashedAt), {
        timeoutMs: CRASH_BOUND_MS,
        intervalMs: 20,
        what: 'the service to answer 503 after the crash',
      }).then(() => createUntilAnswered('crash-retried-idempotently'));
      // It runs beside the wait for the new primary; its result is awaited below.
      retry.catch(() => undefined);
    });
    const crashRetry = await retry;
    const entries = service.lines.map((line) => JSON.parse(line) as { level?: number; context?: string; msg?: string });
    const warnings = entries.filter((e) => e.level === 40).map((e) => `${e.context}: ${e.msg?.slice(0, 100)}`);
    report(`kill -9 of ${victim.name}'s Patroni and PostgreSQL, ${survivor.name} promoted`, {
      ...measured.figures,
      serviceWarningsThroughBothFailovers: countBy(warnings),
    });
    report('idempotent create retried across the crash', crashRetry);
    expectFailoverHeld(measured, CRASH_BOUND_MS);
    // The first attempt fell in the failover: a 503 or a lost connection, never a 500.
    expect(crashRetry?.attempts[0]).toMatch(/^(503|lost: .+)$/);
    expect(crashRetry).toMatchObject({ finalStatus: 201, replayedStatus: 201, rows: 1 });
  }, 240_000);
});

/** The animals the point-in-time case creates under load before the mistake, and its requests a second. */
const PITR_CREATES = 200;
const PITR_LOAD_RATE = 100;
/** A commit's segment is switched within archive_timeout, then pushed; the bound leaves room for a busy machine. */
const ARCHIVE_LAG_BOUND_MS = (SETTINGS.archiveTimeout + 20) * 1000;

/** Every row of `pets`, in order, as PostgreSQL's JSON: compared whole, field for field. */
async function petsTable(url: string): Promise<{ rows: number; json: string }> {
  const [row] = await queryOnce<{ rows: string; json: string | null }>(
    url,
    'SELECT count(*) AS rows, json_agg(p ORDER BY p.id)::text AS json FROM pets p',
  );
  return { rows: Number(row.rows), json: row.json ?? '[]' };
}

/** The operator's copy back ("Backups and restore"): `\copy` out, then in at once, ids kept, rows still there skipped. */
async function copyPetsBack(restoredUrl: string, liveUrl: string): Promise<void> {
  const dir = await workDirectory('pitr-copy');
  try {
    const file = join(dir, 'pets-restored.csv');
    const psql = (url: string, args: string[]) => runOnce(pgProgram('psql'), [url, '-v', 'ON_ERROR_STOP=1', ...args]);
    expect(await psql(restoredUrl, ['-c', `\\copy pets TO '${file}' CSV`])).toMatchObject({ code: 0 });
    const script = [
      'BEGIN;',
      'CREATE TEMPORARY TABLE restored_pets (LIKE pets) ON COMMIT DROP;',
      `\\copy restored_pets FROM '${file}' CSV`,
      'INSERT INTO pets OVERRIDING SYSTEM VALUE SELECT * FROM restored_pets ON CONFLICT (id) DO NOTHING;',
      'COMMIT;',
      '',
    ];
    await writeFile(join(dir, 'copy-back.sql'), script.join('\n'));
    const back = await psql(liveUrl, ['-f', join(dir, 'copy-back.sql')]);
    expect(back).toMatchObject({ code: 0, output: expect.stringContaining(`INSERT 0 `) });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('continuous archiving and point-in-time recovery (pgBackRest, WAL archived from every node)', () => {
  it(`a restore to the moment before a mistaken DELETE FROM pets brings back all ${PITR_CREATES} animals created under load, field for field`, async () => {
    const primary = (await cluster.primary())!;
    // pgBackRest restores the newest backup that stopped before the target (whole seconds): it ends before the creates.
    const backupStarted = Date.now();
    await cluster.pgBackRest(['--type=full', 'backup'], 300_000);
    const backupMs = Date.now() - backupStarted;
    const backupSizes = /database size: .*/.exec(await cluster.pgBackRest(['info']))?.[0];
    const load = startLoad({
      origin: service.origin,
      key: KEY,
      prefix: 'pitr',
      ratePerSecond: PITR_LOAD_RATE,
      count: 2 * PITR_CREATES,
      mix: ['create', 'list'],
    });
    const loaded = summarise(await load.done);
    expect(loaded).toMatchObject({ created201: PITR_CREATES, non2xx: 0 });
    expect((await storedByName(database(), 'pitr')).size).toBe(PITR_CREATES);
    const before = await petsTable(database());

    // The moment to go back to, from the database's clock, and then the mistake, through the read-write address.
    const [{ target }] = await queryOnce<{ target: string }>(database(), 'SELECT clock_timestamp()::text AS target');
    const deleted = (await queryOnce(database(), 'DELETE FROM pets RETURNING id')).length;
    const walQuery = 'SELECT pg_walfile_name(pg_current_wal_lsn()) AS wal';
    const [{ wal }] = await queryOnce<{ wal: string }>(database(), walQuery);
    const deletedAt = Date.now();
    const afterDelete = await petsTable(database());

    // The loss window: until the segment holding the DELETE is in the repository, a loss of every node loses it.
    const archived = 'SELECT last_archived_wal >= $1 AS done FROM pg_stat_archiver';
    await pollUntil(async () => (await queryOnce<{ done: boolean | null }>(database(), archived, [wal]))[0].done, {
      timeoutMs: ARCHIVE_LAG_BOUND_MS,
      intervalMs: 100,
      what: `${wal}, holding the DELETE, to be archived`,
    });
    const archiveLagMs = Date.now() - deletedAt;

    const restoreStarted = Date.now();
    const restored = await cluster.restoreToTime(target);
    let restoredTable: { rows: number; json: string };
    try {
      restoredTable = await petsTable(restored.url(DATABASE));
      await copyPetsBack(restored.url(DATABASE), cluster.url(DATABASE, APP_ROLE));
    } finally {
      await restored.stop();
    }
    const restoredMs = Date.now() - restoreStarted;
    const afterRestore = await petsTable(database());
    // The service serves them again: one of the animals created before the mistake, by its id.
    const [first] = (JSON.parse(before.json) as { id: number; name: string }[]).filter((p) =>
      p.name.startsWith('pitr-'),
    );
    const served = await fetch(`${service.origin}/v1/pets/${first.id}`, { headers: bearer });

    report(`point-in-time restore on ${primary.name} (archive_timeout ${SETTINGS.archiveTimeout} s)`, {
      load: { requests: loaded.requests, byStatus: loaded.byStatus },
      rows: before.rows,
      target,
      fullBackup: { ms: backupMs, sizes: backupSizes },
      archiveLagMs,
      restoreMs: restored.restoreMs,
      recoveryMs: restored.recoveryMs,
      restoreToRowsBackMs: restoredMs,
    });
    expect(deleted).toBe(before.rows);
    expect(afterDelete.rows).toBe(0);
    expect(restoredTable).toEqual(before);
    expect(afterRestore).toEqual(before);
    expect([served.status, await served.json()]).toMatchObject([200, { id: first.id, name: first.name }]);
    expect(loggedErrors(service)).toEqual([]);
  }, 240_000);
});
