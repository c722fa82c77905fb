import { expect } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmdirSync } from 'node:fs';
import { chown, mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { DATABASE_POOL_DEFAULTS } from '../src/config/app-config.js';
import { Database } from '../src/database/database.js';
import { toApiError } from '../src/edge/errors/to-api-error.js';
import type { Pet } from '../src/pets/dto/pet.dto.js';
import {
  burst,
  countByStatus,
  expectAcknowledgedStored,
  expectUnavailable,
  faultCounts,
} from './support/database-answers.js';
import { EmbeddedServer, startEmbeddedServer } from './support/database-server.js';
import { pollUntil } from './support/poll.js';
import { ProductionService, startProductionService } from './support/production-service.js';
import { ServiceProcess } from './support/service-process.js';
import { setDatabaseReadOnly, terminateServiceSessions } from './support/test-database.js';
import { ApiResponse, auth, jsonBody, request, startTestApp, TestApp, TEST_KEY } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

const create = (origin: string, name: string) => request<Pet>(origin, '/v1/pets', jsonBody({ name, categoryId: 1 }));
const read = (origin: string, path = '/v1/pets') => request<Pet[]>(origin, path, { headers: auth() });
const readiness = async (origin: string) => (await fetch(`${origin}/health/ready`)).status;
const named = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
/** Creates an animal of each name, `concurrency` at a time; the answers in order. */
const createAll = (origin: string, names: string[], concurrency: number) =>
  burst(names.length, concurrency, (i) => create(origin, names[i]));

// Each fault answered 503 with Retry-After (never the database's message), reads served, acknowledged creates stored.
describe('a read-only database (a demoted primary after a failover, a maintenance switch)', () => {
  const METRICS_TOKEN = 'fault-answers-metrics-token-0123456789';
  let running: ProductionService;
  let sql: Client;
  let service: ServiceProcess;

  beforeAll(async () => {
    running = await startProductionService({
      API_KEYS: TEST_KEY,
      CURSOR_SECRET: 'fault-answers-cursor-secret-0123456789',
      METRICS_TOKEN,
      RATE_LIMIT_PER_MINUTE: '0',
    });
    ({ sql, service } = running);
  }, 300_000);

  afterAll(() => running?.close(), 60_000);

  const setReadOnly = async (on: boolean) => {
    await setDatabaseReadOnly(sql, on);
    // The pool has dropped its terminated connections once a read answers again.
    await pollUntil(async () => (await read(service.origin)).status === 200, {
      timeoutMs: 10_000,
      what: 'reads to be served again',
    });
  };

  const faults = () => faultCounts(service.origin, { authorization: `Bearer ${METRICS_TOKEN}` });

  it('answers creates 503 with Retry-After, keeps serving reads and readiness, logs one line and counts each', async () => {
    const names = [named('ro-before', 3), named('ro-during', 30), named('ro-after', 3)];
    const before = await createAll(service.origin, names[0], 3);
    expect(countByStatus(before)).toEqual({ 201: 3 });
    const logLinesBefore = service.lines.length;

    await setReadOnly(true);
    const faultsBefore = await faults();
    const during = await createAll(service.origin, names[1], 10);
    during.forEach(expectUnavailable);

    const list = await read(service.origin, '/v1/pets?limit=100');
    expect(list.status).toBe(200);
    expect(list.body.map((pet) => pet.name)).toEqual(expect.arrayContaining(before.map(({ body }) => body.name)));
    expect((await read(service.origin, `/v1/pets/${before[0].body.id}`)).status).toBe(200);
    // Every replica shares a read-only database: taking them all out of the load balancer would leave no reads.
    expect(await readiness(service.origin)).toBe(200);

    // Terminating the sessions (the failover) may fail a request or two on a connection the pool had not yet
    // dropped (57P01, 08): those are counted and logged as what they are; every class's series starts at 0.
    const counted = await faults();
    const expected = ['25', '57', '08'];
    const unexpected = Object.keys(counted).filter((sqlClass) => counted[sqlClass] > 0 && !expected.includes(sqlClass));
    expect(unexpected).toEqual([]);
    expect(counted['25']).toBeGreaterThan(0);
    const sum = (counts: Record<string, number>) => Object.values(counts).reduce((total, count) => total + count, 0);
    expect(sum(counted) - sum(faultsBefore)).toBe(30);

    // Lines reach stdout in batches, at least every second.
    const faultLines = await pollUntil(
      () => {
        const lines = service.lines
          .slice(logLinesBefore)
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .filter((line) => line.context === 'DatabaseFaults');
        return lines.some((line) => line.sqlstate === '25006') && lines;
      },
      { timeoutMs: 5_000, what: 'the fault line' },
    );
    expect(faultLines.filter((line) => line.sqlstate === '25006')).toEqual([
      expect.objectContaining({
        level: 40,
        sqlstate: '25006',
        sqlClass: '25',
        postgresMessage: 'cannot execute INSERT in a read-only transaction',
        failures: 1,
      }),
    ]);
    expect(faultLines.filter((line) => !expected.includes(line.sqlClass as string))).toEqual([]);
    expect(faultLines.filter((line) => 'stack' in line || 'err' in line)).toEqual([]);
    const errors = service.lines.slice(logLinesBefore).filter((line) => /"level":50|"stack"/.test(line));
    expect(errors).toEqual([]);

    await setReadOnly(false);
    const after = await createAll(service.origin, names[2], 3);
    expect(countByStatus(after)).toEqual({ 201: 3 });
    await expectAcknowledgedStored(sql, [...before, ...during, ...after], names.flat());
    const { rows } = await sql.query<{ count: string }>(`SELECT count(*) FROM pets WHERE name LIKE 'ro-during-%'`);
    expect(Number(rows[0].count)).toBe(0);
  }, 60_000);
});

describe('a crowded database (max_connections reached by other clients)', () => {
  const MAX_CONNECTIONS = 6;
  let server: EmbeddedServer;
  const holders: Client[] = [];

  beforeAll(async () => {
    // Superusers get no reserved slots here, so the test's own connections count like anyone's.
    server = await startEmbeddedServer({
      flags: ['-c', `max_connections=${MAX_CONNECTIONS}`, '-c', 'superuser_reserved_connections=0'],
    });
  }, 120_000);
  afterAll(() => Promise.all(holders.map((holder) => holder.end().catch(() => undefined))));
  const t = testAppPerBlock({}, () => ({ adminUrl: server.adminUrl }));
  afterAll(() => server?.stop(), 60_000);

  /** Another client's connection, held open; null once the server has no slot left. */
  const hold = async (): Promise<Client | null> => {
    const holder = new Client({ connectionString: t.database.url });
    holder.on('error', () => undefined);
    try {
      await holder.connect();
    } catch {
      return null;
    }
    holders.push(holder);
    return holder;
  };
  const release = () => Promise.all(holders.splice(0).map((holder) => holder.end()));
  const slotsTaken = async () => {
    const sessions = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'";
    return Number((await t.sql.query<{ count: string }>(sessions)).rows[0].count);
  };

  beforeEach(async () => {
    await terminateServiceSessions(t.sql);
    await pollUntil(() => t.app.get(Database).pool.totalCount === 0, { what: 'the pool to drop its sessions' });
  });

  it('with 3 slots free and 40 requests at a time, every request waits for a pooled connection and none fails', async () => {
    // The test's own connection (t.sql) and two more: 3 of the 6 slots are another client's.
    await hold();
    await hold();
    expect(await slotsTaken()).toBe(3);

    // However many requests wait for a slot, the pool carries one listener for them.
    const pool = t.app.get(Database).pool;
    let mostListeners = 0;
    const sampler = setInterval(() => (mostListeners = Math.max(mostListeners, pool.listenerCount('release'))), 5);
    const names = named('crowd', 200);
    const answers = await burst<unknown>(200, 40, (i) =>
      i % 2 === 0 ? create(t.origin, names[i]) : read(t.origin),
    ).finally(() => clearInterval(sampler));
    expect(countByStatus(answers)).toEqual({ 200: 100, 201: 100 });
    expect(mostListeners).toBe(1);
    await expectAcknowledgedStored(t.sql, answers as ApiResponse<Pet>[], names);
    await release();
  }, 60_000);

  it('with no slot at all for the service, answers 503 with Retry-After within the connect timeout, stays ready, and recovers', async () => {
    while ((await hold()) !== null);
    expect(await slotsTaken()).toBe(MAX_CONNECTIONS);

    const started = Date.now();
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => read(t.origin)),
      create(t.origin, 'crowded-out'),
    ]);
    answers.forEach(expectUnavailable);
    expect(Date.now() - started).toBeLessThan(4_000);
    // Every replica shares a server without free slots: they stay in the load balancer, answering 503 themselves.
    expect(await readiness(t.origin)).toBe(200);

    await release();
    const created = await pollUntil(
      async () => {
        const response = await create(t.origin, 'after-crowd');
        return response.status === 201 && response;
      },
      { timeoutMs: 10_000, what: 'creates to succeed again' },
    );
    await expectAcknowledgedStored(t.sql, [created], ['after-crowd']);
  }, 60_000);
});

/** A tmpfs can be mounted here (root, with the capability): the full-disk test needs one. */
function tmpfsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not running as root';
  const probe = join(tmpdir(), `animal-store-tmpfs-probe-${process.pid}`);
  mkdirSync(probe, { recursive: true });
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { encoding: 'utf8' });
    if (mounted.status !== 0) return `mount -t tmpfs failed: ${(mounted.stderr || String(mounted.error)).trim()}`;
    spawnSync('umount', [probe]);
    return null;
  } finally {
    rmdirSync(probe);
  }
}

const cannotMount = tmpfsUnavailable();
if (cannotMount) process.stdout.write(`Skipping the full-disk test: ${cannotMount}.\n`);

describe('a full disk (the tables on a filesystem with no space left)', () => {
  let server: EmbeddedServer;
  let t: TestApp;
  let mountPoint: string;

  beforeAll(async () => {
    if (cannotMount) return;
    server = await startEmbeddedServer();
    mountPoint = await mkdtemp(join(tmpdir(), 'animal-store-full-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0755', 'tmpfs', mountPoint]);
    expect(mounted.status).toBe(0);
    // The cluster runs as the `postgres` user (as root); the tablespace directory must be its own.
    const postgresUid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    await mkdir(join(mountPoint, 'tablespace'));
    await chown(join(mountPoint, 'tablespace'), postgresUid, postgresUid);
    t = await startTestApp({}, { adminUrl: server.adminUrl });
    await t.sql.query(`CREATE TABLESPACE small LOCATION '${join(mountPoint, 'tablespace')}'`);
    await t.sql.query('ALTER TABLE pets SET TABLESPACE small');
    const { rows } = await t.sql.query<{ index: string }>(
      `SELECT indexrelid::regclass::text AS index FROM pg_index WHERE indrelid = 'pets'::regclass`,
    );
    for (const { index } of rows) await t.sql.query(`ALTER INDEX ${index} SET TABLESPACE small`);
  }, 120_000);

  afterAll(async () => {
    if (cannotMount) return;
    try {
      // Bounded below the hook's own limit, so that the unmount below always runs.
      const closed = Promise.resolve(t?.close()).then(() => server?.stop());
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 45_000).unref())]);
    } finally {
      // Whatever happened above: a tmpfs left mounted outlives the run.
      if (mountPoint) spawnSync('umount', ['-l', mountPoint]);
      if (mountPoint) await rm(mountPoint, { recursive: true, force: true });
    }
  }, 60_000);

  /** Takes every free byte of the filesystem; returns how to give them back. */
  async function fill(): Promise<() => Promise<void>> {
    const filler = join(mountPoint, 'filler');
    const file = await open(filler, 'w');
    const chunk = Buffer.alloc(256 * 1024);
    try {
      for (let written = 0; written < 64 * 1024 * 1024; written += chunk.length) await file.write(chunk);
      throw new Error('the filesystem did not fill up within 64 MiB');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    } finally {
      await file.close();
    }
    return () => rm(filler);
  }

  (cannotMount ? it.skip : it)(
    'answers creates 503 with Retry-After once no page has room, keeps serving reads, and writes again when space returns',
    async () => {
      const names = [named('full-before', 3), named(`full-during-${'x'.repeat(60)}`, 400), ['full-after']];
      const before = await createAll(t.origin, names[0], 3);
      expect(countByStatus(before)).toEqual({ 201: 3 });
      const free = await fill();
      let during: ApiResponse<Pet>[];
      try {
        during = await createAll(t.origin, names[1], 20);
        // Rows still fit into the pages already there; once none has room, the table cannot grow.
        for (const answer of during) if (answer.status !== 201) expectUnavailable(answer);
        expect(countByStatus(during)[503]).toBeGreaterThan(0);
        expect((await read(t.origin, '/v1/pets?limit=100')).status).toBe(200);
        expect((await read(t.origin, `/v1/pets/${before[0].body.id}`)).status).toBe(200);
        expect(await readiness(t.origin)).toBe(200);
      } finally {
        await free();
      }
      const after = await create(t.origin, 'full-after');
      expect(after.status).toBe(201);
      await expectAcknowledgedStored(t.sql, [...before, ...during, after], names.flat());
    },
    120_000,
  );
});

describe('a full local pool (its one connection busy), serialization failures and deadlocks', () => {
  const t = testAppPerBlock({ databasePool: { ...DATABASE_POOL_DEFAULTS, max: 1 } });
  let dataSource: DataSource;
  let retrying: Database;

  beforeAll(async () => {
    [dataSource, retrying] = [t.app.get(DataSource), t.app.get(Database)];
    // A sequence counts attempts outside any transaction, so a rolled-back attempt is still counted.
    await dataSource.query(`
      CREATE SEQUENCE attempts;
      CREATE FUNCTION conflict(failures int, code text) RETURNS int AS $$
      BEGIN
        IF nextval('attempts') <= failures THEN
          RAISE EXCEPTION 'simulated conflict' USING ERRCODE = code;
        END IF;
        RETURN 1;
      END $$ LANGUAGE plpgsql`);
  });

  // Each case counts its own attempts, whatever the previous one left.
  beforeEach(() => dataSource.query('ALTER SEQUENCE attempts RESTART'));

  const attempts = async () => {
    const [row] = await dataSource.query<{ last_value: string; is_called: boolean }[]>(
      'SELECT last_value, is_called FROM attempts',
    );
    await dataSource.query('ALTER SEQUENCE attempts RESTART');
    return row.is_called ? Number(row.last_value) : 0;
  };
  const conflict = (failures: number, sqlstate: string) => `SELECT conflict(${failures}, '${sqlstate}') AS ok`;

  // First: every fault class is still at 0.
  it('answers 503 and counts the fault as the pool, apart from an unreachable server (08), every class at 0 before', async () => {
    expect(Object.values(await faultCounts(t.origin)).every((count) => count === 0)).toBe(true);
    // The pool's only connection, held: the next request waits the connect timeout for it, in vain.
    const held = await t.app.get(Database).pool.connect();
    try {
      expectUnavailable(await read(t.origin));
    } finally {
      held.release();
    }
    expect(await faultCounts(t.origin)).toMatchObject({ pool: 1, '08': 0 });
    expect((await read(t.origin)).status).toBe(200);
  }, 60_000);

  it.each(['40001', '40P01'])('runs a statement on its own once more after %s, then succeeds', async (sqlstate) => {
    await expect(retrying.query(conflict(1, sqlstate))).resolves.toEqual([{ ok: 1 }]);
    expect(await attempts()).toBe(2);
  });

  it('answers 503 when the second run fails too, and retries nothing else', async () => {
    const twice = toApiError(await retrying.query(conflict(2, '40P01')).catch((error: unknown) => error));
    expect(await attempts()).toBe(2);
    expect({ status: twice.getStatus(), headers: twice.headers }).toEqual({
      status: 503,
      headers: { 'Retry-After': '5' },
    });

    const other = toApiError(await retrying.query(conflict(1, '23505')).catch((error: unknown) => error));
    expect(await attempts()).toBe(1);
    expect(other.getStatus()).toBe(500);
  });

  it('does not repeat a statement inside a transaction, but runs the whole transaction once more', async () => {
    const inTransaction = (on: Database | DataSource) => on.transaction((tx) => tx.query(conflict(1, '40001')));
    await expect(inTransaction(dataSource)).rejects.toMatchObject({ driverError: { code: '40001' } });
    expect(await attempts()).toBe(1);
    await expect(inTransaction(retrying)).resolves.toEqual([{ ok: 1 }]);
    expect(await attempts()).toBe(2);
  });
});
