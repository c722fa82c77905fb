import { expect } from '@jest/globals';
import pg from 'pg';
import { REPLICA_CHECK_MS } from '../../src/database/read-replicas.js';
import { RETRY_AFTER_SECONDS } from '../../src/edge/errors/to-api-error.js';
import { Load, Outcome, startLoad } from '../support/fleet/load.js';
import {
  APP_ROLE,
  DATABASE,
  PatroniCluster,
  PatroniNode,
  startPatroniCluster,
  startServiceOnCluster,
  TEST_SETTINGS,
} from '../support/fleet/patroni-cluster.js';
import { pollUntil } from '../support/poll.js';
import { ServiceProcess } from '../support/service-process.js';

/**
 * Reads on a PostgreSQL standby (docs/operating.md, "Reading from replicas") on the failover spec's cluster: the
 * built service with DATABASE_URL on HAProxy's primary port and DATABASE_REPLICA_URL on its replica port. Two
 * clients: a writer that reads each of its creates back at once, and a reader that never writes. Who answered the
 * reads is counted twice, by the service (/metrics) and by each server (pg_stat_statements, which counts a statement
 * as it ends), and the counts must agree. Under both clients' load, the standby then replays late, is stopped and
 * started again, and is promoted by a switchover.
 */

const WRITER_KEY = 'replicas-writer-key-0123456789abcdef';
const READER_KEY = 'replicas-reader-key-0123456789abcdef';
const METRICS_TOKEN = 'replicas-metrics-token-0123456789abcdef';
/** DATABASE_REPLICA_MAX_LAG_MS: short, so that the lag case is. */
const MAX_LAG_MS = 2_000;
/** The standby's `recovery_min_apply_delay` in the lag case, well past MAX_LAG_MS. */
const APPLY_DELAY_MS = 10_000;
/** Room for a machine whose two cores are shared with other test runs. */
const SLACK_MS = 3_000;
/** A standby past the bound loses its reads at the next round, whose sample of the primary may be a round old. */
const LAG_BOUND_MS = MAX_LAG_MS + 2 * REPLICA_CHECK_MS + SLACK_MS;
/** A standby fresh again gets reads at the next round, once HAProxy (for a restarted one) leads to it again. */
const RETURN_BOUND_MS = 2 * REPLICA_CHECK_MS + TEST_SETTINGS.interMs * TEST_SETTINGS.rise + SLACK_MS;
const READER_RATE = 20;
const WRITER_RATE = 10;
/** The animals the reader gets by id. */
const SEEDED = 20;
/** The reader alone: half lists, half gets by id. */
const READER_ALONE = 60;
/** How long a case's load may run at most: it stops there whatever happens. */
const MAX_LOAD_MS = 120_000;
const PETS_READS = `SELECT coalesce(sum(calls), 0)::int AS n FROM pg_stat_statements
  WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND userid = '${APP_ROLE}'::regrole AND query ~* '^select\\M.*\\mfrom pets\\M'`;

const report = (title: string, figures: unknown) =>
  process.stdout.write(`replicas: ${title}: ${JSON.stringify(figures)}\n`);

let cluster: PatroniCluster | undefined;
let service: ServiceProcess | undefined;
let seeded: number[] = [];

beforeAll(async () => {
  cluster = await startPatroniCluster(TEST_SETTINGS);
  service = await startServiceOnCluster(cluster, {
    DATABASE_REPLICA_URL: cluster.replicaUrl(DATABASE, APP_ROLE),
    DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
    API_KEYS: `writer:${WRITER_KEY},reader:${READER_KEY}`,
    METRICS_TOKEN,
  });
  const admin = new pg.Client({ connectionString: cluster.url(DATABASE) });
  await admin.connect();
  try {
    await admin.query('CREATE EXTENSION pg_stat_statements');
    // The reader's animals, written around the service: no client's reads are pinned to the primary by them.
    const { rows } = await admin.query<{ id: string }>(
      "INSERT INTO pets (name, category_id, status) SELECT 'seed-' || i, 1, 'available' FROM generate_series(1, $1) i RETURNING id",
      [SEEDED],
    );
    seeded = rows.map((row) => Number(row.id));
  } finally {
    await admin.end();
  }
  await pollUntil(async () => (await scalar(cluster!.nodes[1], 'SELECT count(*)::int AS n FROM pets')) === SEEDED, {
    what: 'the standby to replay the seeded animals',
  });
}, 240_000);

afterAll(async () => {
  service?.kill('SIGKILL');
  await service?.exited;
  await cluster?.stop();
}, 60_000);

/** One number (column `n`) from a node's own address, as the superuser, in the service's database. */
async function scalar(node: PatroniNode, text: string): Promise<number> {
  const client = new pg.Client({ connectionString: cluster!.nodeUrl(node, DATABASE), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<{ n: number }>(text)).rows[0].n;
  } finally {
    await client.end();
  }
}

/** The service's `animal_store_database_*` series, by name and labels. */
async function metrics(): Promise<Map<string, number>> {
  const response = await fetch(`${service!.origin}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    signal: AbortSignal.timeout(5_000),
  });
  const lines = (await response.text()).split('\n').filter((line) => line.startsWith('animal_store_database_'));
  return new Map(
    lines.map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ')))]),
  );
}

const reads = (m: Map<string, number>, target: 'primary' | 'replica') =>
  m.get(`animal_store_database_reads_total{target="${target}"}`) ?? 0;
const fallbacks = (m: Map<string, number>, reason: string) =>
  m.get(`animal_store_database_read_fallbacks_total{reason="${reason}"}`) ?? 0;

/** Reads counted so far: by the service, by target; by each server (null: not asked), the service's reads of pets. */
async function counts(primary: PatroniNode, standby: PatroniNode | null) {
  const [m, onPrimary, onStandby] = await Promise.all([
    metrics(),
    scalar(primary, PETS_READS),
    standby && scalar(standby, PETS_READS),
  ]);
  return {
    primary: reads(m, 'primary'),
    replica: reads(m, 'replica'),
    ownWrite: fallbacks(m, 'own_write'),
    onPrimary,
    onStandby,
  };
}

type Counts = Awaited<ReturnType<typeof counts>>;
const since = (before: Counts, after: Counts): Counts => ({
  primary: after.primary - before.primary,
  replica: after.replica - before.replica,
  ownWrite: after.ownWrite - before.ownWrite,
  onPrimary: after.onPrimary - before.onPrimary,
  onStandby: after.onStandby === null || before.onStandby === null ? null : after.onStandby - before.onStandby,
});

/** Resolves once the service has measured the standby fresh enough for reads. */
const replicaInUse = () =>
  pollUntil(
    async () => {
      const lag = [...(await metrics())].find(([name]) => name.startsWith('animal_store_database_replica_lag_seconds'));
      return lag !== undefined && lag[1] * 1000 <= MAX_LAG_MS;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: 'the service to measure the standby fresh enough for reads' },
  );

/** Polls /metrics until `rose` says so; how long that took. */
async function untilMetrics(what: string, timeoutMs: number, rose: (m: Map<string, number>) => boolean) {
  const started = Date.now();
  await pollUntil(async () => rose(await metrics()), { timeoutMs, intervalMs: 100, what });
  return Date.now() - started;
}

/** Resolves once `count` more requests of `load` were answered. */
const answeredMore = (load: Load, count: number) => {
  const target = load.outcomes.length + count;
  return pollUntil(() => load.outcomes.length >= target, {
    timeoutMs: 30_000,
    intervalMs: 50,
    what: `${count} answers`,
  });
};

/** Lists and gets of the seeded animals: `count` of them, or more until finished. */
const startReader = (count: number, maxCount = count) =>
  startLoad({
    origin: service!.origin,
    key: READER_KEY,
    prefix: 'reader',
    ratePerSecond: READER_RATE,
    count,
    maxCount,
    mix: ['list', 'get'],
    ids: seeded,
  });

/** The reader and the writer (its creates, each read back at once) while `work` runs; their answers. */
async function underLoad<T>(prefix: string, work: (reader: Load) => Promise<T>) {
  const reader = startReader(READER_RATE, (READER_RATE * MAX_LOAD_MS) / 1000);
  const writer = startLoad({
    origin: service!.origin,
    key: WRITER_KEY,
    prefix,
    ratePerSecond: WRITER_RATE,
    count: WRITER_RATE,
    maxCount: (WRITER_RATE * MAX_LOAD_MS) / 1000,
    mix: ['create'],
    readBack: true,
  });
  const result = await answeredMore(reader, READER_RATE)
    .then(() => work(reader))
    .finally(() => [reader, writer].forEach((load) => load.finish()));
  return { result, reader: await reader.done, writer: await writer.done };
}

/** Every answer a client got, by operation and status (`lost` for a connection that failed). */
function answers(outcomes: Outcome[]): Record<string, number> {
  const byKind: Record<string, number> = {};
  for (const o of outcomes) {
    const kind = `${o.operation} ${o.status ?? `lost: ${o.error}`}`;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  return byKind;
}

const everyRead200 = { 'list 200': expect.any(Number), 'get 200': expect.any(Number) };

/** The writer's answers: every create 201, read back 200 at once; nothing else. */
function expectEveryCreateReadBack(outcomes: Outcome[]) {
  const created = outcomes.filter((o) => o.operation === 'create').length;
  expect(created).toBeGreaterThan(0);
  expect(answers(outcomes)).toEqual({ 'create 201': created, 'read-back 200': created });
}

/** The reader alone: every read answered 200 by `standby`, none by `primary`, as the service and the servers count. */
async function expectReadsOnStandbyOnly(primary: PatroniNode, standby: PatroniNode) {
  const before = await counts(primary, standby);
  const outcomes = await startReader(READER_ALONE).done;
  const alone = { answers: answers(outcomes), reads: since(before, await counts(primary, standby)) };
  expect(alone).toEqual({
    answers: { 'list 200': READER_ALONE / 2, 'get 200': READER_ALONE / 2 },
    reads: { primary: 0, replica: READER_ALONE, ownWrite: 0, onPrimary: 0, onStandby: READER_ALONE },
  });
  return alone;
}

describe('reads on a streaming standby behind HAProxy (Patroni /replica), writes on the primary', () => {
  it('reads reach the standby and none the primary; every create is read back by its writer at once', async () => {
    const [primary, standby] = cluster!.nodes;
    await replicaInUse();
    const alone = await expectReadsOnStandbyOnly(primary, standby);
    const before = await counts(primary, standby);
    const { reader, writer } = await underLoad('mixed', (load) => answeredMore(load, 3 * READER_RATE));
    const mixed = since(before, await counts(primary, standby));
    report('the reader alone, then beside the writer', {
      alone,
      mixed,
      reader: answers(reader),
      writer: answers(writer),
    });

    expect(answers(reader)).toEqual(everyRead200);
    expectEveryCreateReadBack(writer);
    // The reader's reads on the standby; the writer's, pinned after its creates, on the primary.
    const readBacks = writer.filter((o) => o.operation === 'read-back').length;
    expect(mixed).toEqual({
      primary: readBacks,
      replica: reader.length,
      ownWrite: readBacks,
      onPrimary: readBacks,
      onStandby: reader.length,
    });
  }, 120_000);

  it(`a standby replaying ${APPLY_DELAY_MS} ms late loses its reads within ${LAG_BOUND_MS} ms, then gets them back; no 5xx`, async () => {
    const [primary, standby] = cluster!.nodes;
    await replicaInUse();
    const delay = async (ms: number) => {
      await cluster!.patchConfig({ postgresql: { parameters: { recovery_min_apply_delay: ms || null } } });
      await pollUntil(
        async () =>
          (await scalar(
            standby,
            "SELECT setting::int AS n FROM pg_settings WHERE name = 'recovery_min_apply_delay'",
          )) === ms,
        { timeoutMs: 15_000, what: `recovery_min_apply_delay = ${ms} ms on the standby` },
      );
    };
    const { result, reader, writer } = await underLoad('lag', async (load) => {
      const before = await metrics();
      let movedMs: number;
      let lagging: Counts;
      try {
        await delay(APPLY_DELAY_MS);
        movedMs = await untilMetrics(
          'reads to leave the lagging standby',
          LAG_BOUND_MS,
          (m) => fallbacks(m, 'lagging') > fallbacks(before, 'lagging'),
        );
        // Reads sent to the standby before it was measured lagging are answered first.
        await answeredMore(load, 5);
        const start = await counts(primary, standby);
        await answeredMore(load, 2 * READER_RATE);
        lagging = since(start, await counts(primary, standby));
      } finally {
        await delay(0);
      }
      const caughtUp = await metrics();
      const backMs = await untilMetrics(
        'reads to return to the standby',
        RETURN_BOUND_MS,
        (m) => reads(m, 'replica') > reads(caughtUp, 'replica'),
      );
      return { movedMs, lagging, backMs };
    });
    report(`the standby replaying ${APPLY_DELAY_MS} ms late`, {
      ...result,
      reader: answers(reader),
      writer: answers(writer),
    });

    expect(result.lagging).toMatchObject({ replica: 0, onStandby: 0 });
    expect(result.lagging.primary).toBeGreaterThan(0);
    expect(result.lagging.onPrimary).toBeGreaterThan(0);
    expect(answers(reader)).toEqual(everyRead200);
    expectEveryCreateReadBack(writer);
    await expectReadsOnStandbyOnly(primary, standby);
  }, 180_000);

  it('a standby stopped: its reads go to the primary with no 5xx; started again, it gets them back', async () => {
    const [primary, standby] = cluster!.nodes;
    await replicaInUse();
    const { result, reader, writer } = await underLoad('stopped', async (load) => {
      const before = await metrics();
      const stopping = cluster!.stopNode(standby);
      const movedMs = await untilMetrics(
        'reads to leave the stopped standby',
        30_000,
        (m) => fallbacks(m, 'unreachable') > fallbacks(before, 'unreachable'),
      );
      await stopping;
      await answeredMore(load, 5);
      const start = await counts(primary, null);
      await answeredMore(load, 2 * READER_RATE);
      const down = since(start, await counts(primary, null));
      const startedAt = Date.now();
      cluster!.startNode(standby);
      await cluster!.waitForSyncStandby(standby);
      const syncMs = Date.now() - startedAt;
      const synced = await metrics();
      const backMs = await untilMetrics(
        'reads to return to the standby',
        RETURN_BOUND_MS,
        (m) => reads(m, 'replica') > reads(synced, 'replica'),
      );
      return { movedMs, down, syncMs, backMs };
    });
    report('the standby stopped, then started again', { ...result, reader: answers(reader), writer: answers(writer) });

    expect(result.down.replica).toBe(0);
    expect(result.down.primary).toBeGreaterThan(0);
    expect(answers(reader)).toEqual(everyRead200);
    expectEveryCreateReadBack(writer);
    await expectReadsOnStandbyOnly(primary, standby);
  }, 180_000);

  it('a switchover promotes the standby under reads: every read answered 200, and the promoted server gets no replica reads', async () => {
    const [from, to] = cluster!.nodes;
    await cluster!.waitForSyncStandby(to);
    await replicaInUse();
    const before = await metrics();
    const { result, reader, writer } = await underLoad('switchover', async () => {
      const switched = await cluster!.switchover(from, to);
      await cluster!.waitForSyncStandby(from);
      await replicaInUse();
      return switched;
    });
    const after = await metrics();
    const byReason = ['lagging', 'unreachable', 'not_in_recovery', 'not_found'].map(
      (r) => [r, fallbacks(after, r) - fallbacks(before, r)] as const,
    );
    report(`switchover ${from.name} -> ${to.name} (Patroni's answer: ${result.status})`, {
      reader: answers(reader),
      writer: answers(writer),
      fallbacks: Object.fromEntries(byReason),
    });

    expect(result.status).toBe(200);
    expect(answers(reader)).toEqual(everyRead200);
    // The writer's creates, and its reads pinned to the primary, may meet the switchover: the service's own 503.
    const failed = writer.filter((o) => o.status !== 201 && o.status !== 200);
    expect(failed.map((o) => [o.status, o.failure?.retryAfter])).toEqual(failed.map(() => [503, RETRY_AFTER_SECONDS]));
    await expectReadsOnStandbyOnly(to, from);
  }, 240_000);
});
