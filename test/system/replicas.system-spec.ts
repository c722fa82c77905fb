import { expect } from '@jest/globals';
import { REPLICA_CHECK_MS } from '../../src/database/read-replicas.js';
import { RETRY_AFTER_SECONDS } from '../../src/edge/errors/to-api-error.js';
import { queryOnce } from '../support/fleet/debian-services.js';
import { answeredMore, countBy, Load, Outcome, reporter, startLoad } from '../support/fleet/load.js';
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
 * Reads on a PostgreSQL standby (docs/operating.md, "Reading from replicas") through HAProxy's replica port, for a
 * writer reading each create back at once and a reader; the service's and the servers' counts of who answered agree.
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
const RETURN_BOUND_MS = 2 * REPLICA_CHECK_MS + SETTINGS.interMs * SETTINGS.rise + SLACK_MS;
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

const report = reporter('replicas');

let cluster: PatroniCluster;
let service: ServiceProcess;
let seeded: number[] = [];

beforeAll(async () => {
  cluster = await startPatroniCluster();
  service = await startServiceOnCluster(cluster, {
    DATABASE_REPLICA_URL: cluster.replicaUrl(DATABASE, APP_ROLE),
    DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
    API_KEYS: `writer:${WRITER_KEY},reader:${READER_KEY}`,
    METRICS_TOKEN,
  });
  await queryOnce(cluster.url(DATABASE), 'CREATE EXTENSION pg_stat_statements');
  // The reader's animals, written around the service: no client's reads are pinned to the primary by them.
  const rows = await queryOnce<{ id: string }>(
    cluster.url(DATABASE),
    "INSERT INTO pets (name, category_id, status) SELECT 'seed-' || i, 1, 'available' FROM generate_series(1, $1) i RETURNING id",
    [SEEDED],
  );
  seeded = rows.map((row) => Number(row.id));
  await pollUntil(async () => (await scalar(cluster.nodes[1], 'SELECT count(*)::int AS n FROM pets')) === SEEDED, {
    what: 'the standby to replay the seeded animals',
  });
}, 240_000);

afterAll(async () => {
  service?.kill('SIGKILL');
  await service?.exited;
  await cluster?.stop();
}, 60_000);

/** One number (column `n`) from a node's own address, as the superuser, in the service's database. */
const scalar = async (node: PatroniNode, text: string) =>
  (await queryOnce<{ n: number }>(cluster.nodeUrl(node, DATABASE), text))[0].n;

/** The service's `animal_store_database_*` series, by name and labels. */
async function metrics(): Promise<Map<string, number>> {
  const response = await fetch(`${service.origin}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    signal: AbortSignal.timeout(5_000),
  });
  const lines = (await response.text()).split('\n').filter((line) => line.startsWith('animal_store_database_'));
  return new Map(
    lines.map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ')))]),
  );
}

type Counter = (m: Map<string, number>) => number;
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

/** Polls /metrics until `counter` is past its value in `before`; how long that took. */
async function untilRose(what: string, timeoutMs: number, before: Map<string, number>, counter: Counter) {
  const started = Date.now();
  await pollUntil(async () => counter(await metrics()) > counter(before), { timeoutMs, intervalMs: 100, what });
  return Date.now() - started;
}

/** Lists and gets of the seeded animals: `count` of them, or more until finished. */
const startReader = (count: number, maxCount = count) =>
  startLoad({
    origin: service.origin,
    key: READER_KEY,
    prefix: 'reader',
    ratePerSecond: READER_RATE,
    count,
    maxCount,
    mix: ['list', 'get'],
    ids: seeded,
  });

/** The reader and the writer (its creates, each read back at once) while `work` runs; their answers, printed. */
async function underLoad<T>(prefix: string, work: (reader: Load) => Promise<T>) {
  const reader = startReader(READER_RATE, (READER_RATE * MAX_LOAD_MS) / 1000);
  const writer = startLoad({
    origin: service.origin,
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
  const [read, written] = [await reader.done, await writer.done];
  report(`the ${prefix} case`, { ...result, reader: answers(read), writer: answers(written) });
  return { result, reader: read, writer: written };
}

/** Every answer a client got, by operation and status (`lost` for a connection that failed). */
const answers = (outcomes: Outcome[]) =>
  countBy(outcomes.map((o) => `${o.operation} ${o.status ?? `lost: ${o.error}`}`));

/** The reader's reads all answered 200; the writer's creates all 201, each read back 200 at once. */
function expectEveryAnswer2xx(reader: Outcome[], writer: Outcome[]) {
  expect(answers(reader)).toEqual({ 'list 200': expect.any(Number), 'get 200': expect.any(Number) });
  const created = writer.filter((o) => o.operation === 'create').length;
  expect(created).toBeGreaterThan(0);
  expect(answers(writer)).toEqual({ 'create 201': created, 'read-back 200': created });
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
    const [primary, standby] = cluster.nodes;
    await replicaInUse();
    const alone = await expectReadsOnStandbyOnly(primary, standby);
    const before = await counts(primary, standby);
    const { reader, writer } = await underLoad('mixed', async (load) => {
      await answeredMore(load, 3 * READER_RATE);
    });
    const mixed = since(before, await counts(primary, standby));
    report('reads counted: the reader alone, then beside the writer', { alone, mixed });

    expectEveryAnswer2xx(reader, writer);
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
    const [primary, standby] = cluster.nodes;
    await replicaInUse();
    const setting = "SELECT setting::int AS n FROM pg_settings WHERE name = 'recovery_min_apply_delay'";
    const delay = async (ms: number) => {
      await cluster.patchConfig({ postgresql: { parameters: { recovery_min_apply_delay: ms || null } } });
      await pollUntil(async () => (await scalar(standby, setting)) === ms, {
        timeoutMs: 15_000,
        what: `recovery_min_apply_delay = ${ms} ms on the standby`,
      });
    };
    const { result, reader, writer } = await underLoad('lag', async (load) => {
      const before = await metrics();
      let movedMs: number;
      let lagging: Counts;
      try {
        await delay(APPLY_DELAY_MS);
        movedMs = await untilRose('reads off the lagging standby', LAG_BOUND_MS, before, (m) =>
          fallbacks(m, 'lagging'),
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
      const backMs = await untilRose('reads back on the standby', RETURN_BOUND_MS, caughtUp, (m) =>
        reads(m, 'replica'),
      );
      return { movedMs, lagging, backMs };
    });

    expect(result.lagging).toMatchObject({ replica: 0, onStandby: 0 });
    expect(result.lagging.primary).toBeGreaterThan(0);
    expect(result.lagging.onPrimary).toBeGreaterThan(0);
    expectEveryAnswer2xx(reader, writer);
    await expectReadsOnStandbyOnly(primary, standby);
  }, 180_000);

  it('a standby stopped: its reads go to the primary with no 5xx; started again, it gets them back', async () => {
    const [primary, standby] = cluster.nodes;
    await replicaInUse();
    const { result, reader, writer } = await underLoad('stopped', async (load) => {
      const before = await metrics();
      const stopping = cluster.stopNode(standby);
      const movedMs = await untilRose('reads off the stopped standby', 30_000, before, (m) =>
        fallbacks(m, 'unreachable'),
      );
      await stopping;
      await answeredMore(load, 5);
      const start = await counts(primary, null);
      await answeredMore(load, 2 * READER_RATE);
      const down = since(start, await counts(primary, null));
      const startedAt = Date.now();
      cluster.startNode(standby);
      await cluster.waitForSyncStandby(standby);
      const syncMs = Date.now() - startedAt;
      const synced = await metrics();
      const backMs = await untilRose('reads back on the standby', RETURN_BOUND_MS, synced, (m) => reads(m, 'replica'));
      return { movedMs, down, syncMs, backMs };
    });

    expect(result.down.replica).toBe(0);
    expect(result.down.primary).toBeGreaterThan(0);
    expectEveryAnswer2xx(reader, writer);
    await expectReadsOnStandbyOnly(primary, standby);
  }, 180_000);

  it('a switchover promotes the standby under reads: every read answered 200, and the promoted server gets no replica reads', async () => {
    const [from, to] = cluster.nodes;
    await cluster.waitForSyncStandby(to);
    await replicaInUse();
    const { result, reader, writer } = await underLoad('switchover', async () => {
      const before = await metrics();
      const { status } = await cluster.switchover(from, to);
      await cluster.waitForSyncStandby(from);
      await replicaInUse();
      const after = await metrics();
      const reasons = ['lagging', 'unreachable', 'not_in_recovery', 'not_found'];
      return {
        status,
        fallbacks: Object.fromEntries(reasons.map((r) => [r, fallbacks(after, r) - fallbacks(before, r)])),
      };
    });

    expect(result.status).toBe(200);
    expect(answers(reader)).toEqual({ 'list 200': expect.any(Number), 'get 200': expect.any(Number) });
    // The writer's creates, and its reads pinned to the primary, may meet the switchover: the service's own 503.
    const failed = writer.filter((o) => o.status !== 201 && o.status !== 200);
    expect(failed.map((o) => [o.status, o.failure?.retryAfter])).toEqual(failed.map(() => [503, RETRY_AFTER_SECONDS]));
    await expectReadsOnStandbyOnly(to, from);
  }, 240_000);
});
