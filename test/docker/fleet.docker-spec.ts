import { randomBytes } from 'node:crypto';
import { ComposeProject, containerLogs, docker, IMAGE, inspect, waitForHealth } from './support/docker.js';
import { pollUntil } from '../support/poll.js';

/**
 * docker-compose.fleet.yml as shipped: three replicas behind HAProxy, with Redis, on a real engine; with its optional
 * streaming replica of the database (docker-compose.replica.yml), which the instances read from.
 */
const REPLICAS = 3;
let project: ComposeProject;
let key = '';

beforeAll(async () => {
  project = await ComposeProject.create('fleet', ['docker-compose.fleet.yml', 'docker-compose.replica.yml']);
  await project.composeOk(['up', '-d', '--scale', `api=${REPLICAS}`], 300_000);
  await project.waitForHealth('api', 'healthy', 90_000);
  key = await project.createKey('fleet');
  expect(key).toMatch(/^pet_[0-9A-Za-z]{32}$/);
  const serving = async () => (await project.status(key)) === 200;
  await pollUntil(serving, { timeoutMs: 30_000, what: 'the balancer to serve' });
}, 420_000);

afterAll(async () => {
  await project?.down();
});

describe('docker-compose.fleet.yml', () => {
  it('restarts the replicas one at a time under load through HAProxy: no failed request, no lost or doubled create', async () => {
    const replicas = await project.containers('api');
    expect(replicas).toHaveLength(REPLICAS);

    const run = randomBytes(3).toString('hex');
    const acknowledged = new Set<string>();
    const failures: string[] = [];
    let requests = 0;
    let done = false;
    // Three clients, one request every 600 ms each (about 300 a minute: inside the key's rate limit), alternating
    // creates (with an Idempotency-Key, as clients are told to send) and list reads.
    const client = async (name: string) => {
      for (let index = 0; index < 500 && !done; index += 1) {
        const pacing = new Promise((resolve) => setTimeout(resolve, 600));
        const create = index % 2 === 0;
        const petName = `roll-${run}-${name}-${index}`;
        requests += 1;
        try {
          const response = await project.request(key, create ? '/v1/pets' : '/v1/pets?limit=5', {
            body: create ? { name: petName, categoryId: 1 } : undefined,
            headers: create ? { 'Idempotency-Key': petName } : {},
            signal: AbortSignal.timeout(10_000),
          });
          const body = await response.text();
          if (create && response.status === 201) acknowledged.add(petName);
          else if (!response.ok) failures.push(`${response.status} ${body}`);
        } catch (error) {
          failures.push(String(error));
        }
        await pacing;
      }
    };
    const load = Promise.all(['a', 'b', 'c'].map(client));

    for (const replica of replicas) {
      // Longer than SHUTDOWN_DRAIN_DELAY_MS + SHUTDOWN_GRACE_MS, as the service's stop_grace_period.
      await docker(['restart', '-t', '20', replica], 60_000);
      const { StartedAt } = await inspect(replica);
      await waitForHealth(
        [`container=${replica}`],
        () => Promise.resolve([replica]),
        'healthy',
        60_000,
        `${replica} restarted`,
      );
      // Back in the balancer: the new process has served a request HAProxy sent it.
      await pollUntil(
        async () => (await docker(['logs', '--since', StartedAt, replica])).includes('"route":"/v1/pets"'),
        { timeoutMs: 30_000, intervalMs: 250, what: `${replica} to serve traffic again` },
      );
    }
    done = true;
    await load;

    const stored = new Map(
      (await project.sql(`SELECT name, count(*) FROM pets WHERE name LIKE 'roll-${run}-%' GROUP BY name`))
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split('|') as [string, string]),
    );
    const doubled = [...stored].filter(([, count]) => count !== '1');
    const lost = [...acknowledged].filter((name) => !stored.has(name));
    process.stdout.write(
      `rolling restart of ${REPLICAS} replicas: ${requests} requests, ${failures.length} failed, ` +
        `${acknowledged.size} creates acknowledged, ${stored.size} stored, ${doubled.length} doubled\n`,
    );
    expect(failures).toEqual([]);
    expect(lost).toEqual([]);
    expect(doubled).toEqual([]);
    expect(stored.size).toBe(acknowledged.size);
    expect(acknowledged.size).toBeGreaterThan(20);
  });

  it("counts failed authentications per client behind HAProxy, not per proxy: one client's failures leave another's alone", async () => {
    const wrongKey = () => `pet_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;
    // This client (the host) spends its budget of failures.
    let refusedAt = 0;
    for (let attempt = 1; attempt <= 100 && !refusedAt; attempt += 1) {
      const status = await project.status(wrongKey(), '/v1/pets');
      if (status === 429) refusedAt = attempt;
      else expect(status).toBe(401);
    }
    expect(refusedAt).toBeGreaterThan(1);

    // Another client, a container on the fleet's network, through the same balancer.
    const probe = `
      const get = (key) => fetch('http://lb/v1/pets?limit=1', { headers: { Authorization: 'Bearer ' + key } }).then((r) => r.status);
      Promise.all([get(process.argv[1]), get(process.argv[2])]).then((statuses) => console.log(statuses.join(' ')));`;
    const node = ['run', '--rm', '--network', `${project.name}_fleet`, '--entrypoint', 'node', IMAGE];
    const statuses = await docker([...node, '-e', probe, wrongKey(), key]);
    expect(statuses.trim()).toBe('401 200');
  });
});

describe('docker-compose.replica.yml', () => {
  const onReplica = (query: string) => project.sql(query, 'animal_store', 'postgres-replica');
  const streaming = "SELECT usename, application_name, state FROM pg_stat_replication WHERE state = 'streaming'";

  it('streams from db as a role that may only replicate, whose password no api instance holds', async () => {
    await project.waitForHealth('postgres-replica', 'healthy', 60_000);
    expect(await project.sql(streaming)).toBe('animal_store_replication|postgres-replica|streaming');
    expect(await onReplica('SELECT pg_is_in_recovery()')).toBe('t');
    expect(
      await project.sql(
        'SELECT rolcanlogin, rolreplication, rolsuper, rolcreatedb, rolcreaterole, rolbypassrls, ' +
          "(SELECT count(*) FROM pg_class WHERE relowner = r.oid) FROM pg_roles r WHERE rolname = 'animal_store_replication'",
      ),
    ).toBe('t|t|f|f|f|f|0');
    // With its own password, a session in a database is refused: it streams the WAL and nothing else.
    const conninfo =
      'host=db dbname=animal_store user=animal_store_replication passfile=/var/run/postgresql/replication.pgpass';
    const session = await project.exec('postgres-replica', ['psql', conninfo, '-c', 'SELECT 1']);
    expect(session.stderr).toContain('pg_hba.conf rejects connection');

    const password = (
      await project.execOk('postgres-replica', ['cat', '/run/animal-store/replication-password'])
    ).trim();
    expect(password.length).toBeGreaterThanOrEqual(32);
    expect(await project.whereFound('api', [password])).toBe('0');
    // What the instance reads from instead: the replica, as the service's own role.
    const replicaUrl = new URL(/^DATABASE_REPLICA_URL=(.+)$/m.exec(await project.environment('api'))![1]);
    expect([replicaUrl.username, replicaUrl.host]).toEqual(['animal_store_api', 'postgres-replica:5432']);
  });

  it('serves the lists from the replica, and a create to its writer at once', async () => {
    const scans = "SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 'pets'";
    const before = Number(await onReplica(scans));
    // Once an instance has measured the replica's lag twice (about a second apart), its lists go there.
    const listed = async () => {
      expect(await project.status(key, '/v1/pets?limit=5')).toBe(200);
      return Number(await onReplica(scans)) > before;
    };
    await pollUntil(listed, { timeoutMs: 30_000, intervalMs: 500, what: 'a list read on postgres-replica' });

    for (let index = 0; index < 5; index += 1) {
      const pet = await project.createPet(key, `replica-${index}`);
      // Through the balancer, often on another instance, whose replica may not have replayed it yet.
      const read = await project.request(key, `/v1/pets/${pet.id}`);
      expect({ status: read.status, body: await read.json() }).toEqual({ status: 200, body: pet });
    }
  });

  it('comes back on its kept volume after a recreate and `up`, streaming on without a new copy', async () => {
    const replica = await project.container('postgres-replica');
    expect(await containerLogs(replica)).toContain('postgres-replica: cloned db');
    await project.composeOk(['rm', '--stop', '--force', 'postgres-replica']);
    // `up` again: `secrets` and `roles` find their secrets and role made, and the replica its volume.
    await project.composeOk(['up', '-d', 'postgres-replica'], 180_000);
    const recreated = await project.container('postgres-replica');
    expect(recreated).not.toBe(replica);
    await project.waitForHealth('postgres-replica', 'healthy', 60_000);
    expect(await project.sql(streaming)).toBe('animal_store_replication|postgres-replica|streaming');
    expect(await containerLogs(recreated)).not.toContain('postgres-replica: cloned db');
    expect(await onReplica("SELECT count(*) > 0 FROM pets WHERE name = 'replica-4'")).toBe('t');
  });
});
