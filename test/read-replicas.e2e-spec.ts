import { expect } from '@jest/globals';
import { freePort } from './support/database-server.js';
import { pollUntil } from './support/poll.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { parseApiKeys } from '../src/config/app-config.js';
import { auth, jsonBody, request, startTestApp, TEST_KEY, type TestApp } from './support/test-app.js';

/** A second client: reads of its own, which the first client's create does not pin to the primary. */
const READER_KEY = 'reader-key-0123456789abcdef';
const apiKeys = parseApiKeys(`writer:${TEST_KEY},reader:${READER_KEY}`);

// Reads on a real streaming replica are drilled in test/system/replicas.system-spec.ts; here, what a replica that
// cannot serve reads does to them: nothing a client sees, and the reason counted.
const metric = async (t: TestApp, series: string) => {
  const line = (await request(t.origin, '/metrics')).text.split('\n').find((row) => row.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
};

/** A create by one client, then a list and a get by id by another. */
async function readEverything(t: TestApp): Promise<number[]> {
  const created = await request<{ id: number }>(t.origin, '/v1/pets', jsonBody({ name: 'Rex', categoryId: 1 }));
  const list = await request(t.origin, '/v1/pets?limit=5&status=available', { headers: auth(READER_KEY) });
  const one = await request(t.origin, `/v1/pets/${created.body.id}`, { headers: auth(READER_KEY) });
  return [created.status, list.status, one.status];
}

describe('DATABASE_REPLICA_URL naming a server that is not a replica, or none at all', () => {
  let notAReplica: TestDatabase;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    notAReplica = await createTestDatabase();
  });

  afterAll(async () => {
    await Promise.all(apps.map((t) => t.close()));
    await notAReplica?.drop();
  });

  it('reads from the primary while a primary stands behind the replica URL, and says why', async () => {
    const t = await startTestApp({ apiKeys, replicas: { urls: [notAReplica.url], maxLagMs: 5_000 } });
    apps.push(t);
    const lag = `animal_store_database_replica_lag_seconds{replica="${new URL(notAReplica.url).host}"}`;
    await pollUntil(async () => (await metric(t, lag)) !== undefined, { what: 'the first lag measurement' });
    expect(await metric(t, lag)).toBeNaN();
    expect(await readEverything(t)).toEqual([201, 200, 200]);
    expect(await metric(t, 'animal_store_database_read_fallbacks_total{reason="not_in_recovery"}')).toBe(2);
    expect(await metric(t, 'animal_store_database_reads_total{target="primary"}')).toBe(2);
    expect(await metric(t, 'animal_store_database_reads_total{target="replica"}')).toBe(0);

    // The writer's own reads go to the primary for a while after its create, whatever the replicas' state.
    expect((await request(t.origin, '/v1/pets', { headers: auth() })).status).toBe(200);
    expect(await metric(t, 'animal_store_database_read_fallbacks_total{reason="own_write"}')).toBe(1);
  });

  it('answers every read from the primary while the replica is unreachable', async () => {
    const url = `postgres://nobody:nothing@127.0.0.1:${await freePort()}/none`;
    const t = await startTestApp({ apiKeys, replicas: { urls: [url], maxLagMs: 5_000 } });
    apps.push(t);
    expect(await readEverything(t)).toEqual([201, 200, 200]);
    expect(await metric(t, 'animal_store_database_read_fallbacks_total{reason="unreachable"}')).toBe(2);
    expect(await metric(t, 'animal_store_database_reads_total{target="primary"}')).toBe(2);
  });

  it('counts no reads by target when no replica is set', async () => {
    const t = await startTestApp({ apiKeys });
    apps.push(t);
    expect(await readEverything(t)).toEqual([201, 200, 200]);
    expect(await metric(t, 'animal_store_database_reads_total{target="primary"}')).toBeUndefined();
  });
});
