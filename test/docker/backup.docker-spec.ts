import { expect } from '@jest/globals';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ComposeProject, docker, DOCKER, inspect, run } from './support/docker.js';
import { pollUntil } from '../support/poll.js';

/**
 * compose/backup.sh on the shipped docker-compose.yml, in the days after a backup: a restore after keys were issued,
 * rotated and revoked, ids handed out and a later release's objects added (every client keeps its key, and a second
 * restore changes nothing); the release boundary and the running API guarded before anything changes (requests meanwhile
 * answered); retention next to hand-named copies and after a mass delete;
 * the healthcheck, the metric and a stop during a dump. The scenarios run in order on one project.
 */
let project: ComposeProject;
let key = '';
const bearer = (token = key) => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  project = await ComposeProject.create('backup');
  expect((await project.shell('docker compose up -d', {}, 300_000)).code).toBe(0);
  await project.waitForHealth('api', 'healthy', 120_000);
  key = await createKey('drill');
});

afterAll(async () => {
  await project?.down();
});

/**
 * `apikey` commands, in order, in one `migrate` container (as the owner: the api role cannot write keys), without
 * starting its dependencies again (the stack is up): what each printed last, the key for create and rotate.
 */
async function apikeys(...commands: string[][]): Promise<string[]> {
  const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
  const script = commands.map((args) => `npm run -s apikey -- ${args.map(quote).join(' ')} && echo`).join(' && ');
  const out = await project.oneShot('migrate', ['sh', '-c', script]);
  const printed = out.trim().split('\n\n');
  expect(printed).toHaveLength(commands.length);
  return printed.map((lines) => lines.trim().split('\n').at(-1)!);
}
const createKey = async (name: string) => (await apikeys(['create', name]))[0];
const keyId = (name: string) => project.sql(`SELECT max(id) FROM api_keys WHERE name = '${name}'`);
/** The keys' rows, to compare one restore with the next. */
const keyRows = () =>
  project.sql("SELECT string_agg((to_jsonb(k) - 'last_used_at')::text, ',' ORDER BY id) FROM api_keys k");

interface Pet {
  id: number;
  name: string;
}

async function createPet(name: string): Promise<Pet> {
  const response = await fetch(`${project.origin}/v1/pets`, {
    method: 'POST',
    headers: { ...bearer(), 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, categoryId: 1 }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as Pet;
}

async function allPets(): Promise<Pet[]> {
  const response = await fetch(`${project.origin}/v1/pets?limit=100`, { headers: bearer() });
  expect(response.status).toBe(200);
  return (await response.json()) as Pet[];
}

const statusWith = async (token: string) =>
  (await fetch(`${project.origin}/v1/pets?limit=1`, { headers: bearer(token) })).status;

/**
 * The backup command, in the `backup` service as `docker compose run --rm backup` runs it, without starting its
 * dependencies again: the stack is up (the drill's first restore runs them, as written in docs/operating.md).
 */
const backup = (command: string, settings: NodeJS.ProcessEnv = {}) =>
  project.shell(`docker compose run --rm --no-deps -T backup ${command}`, settings);

/** The backup command's JSON lines on stderr. */
const logLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

async function backupNow(
  settings: NodeJS.ProcessEnv = {},
): Promise<{ file: string; logged: Record<string, unknown>[] }> {
  const now = await backup('now', settings);
  expect(now.code).toBe(0);
  return { file: now.stdout.trim(), logged: logLines(now.stderr) };
}

const files = async (directory = project.backupDir) => (await readdir(directory)).sort();

describe('restore, whatever happened after the backup', () => {
  it('keys issued, rotated and revoked since, a later release’s objects, ids issued since: the drill brings back the backup’s animals, every key as it is now', async () => {
    const [leaky, overlapping, longLived] = await apikeys(
      ['create', 'leaky'],
      ['create', 'overlapping'],
      ['create', 'long-lived'],
    );
    const kept: Pet[] = [];
    for (let index = 0; index < 5; index += 1) kept.push(await createPet(`kept-${index}`));
    const { file } = await backupNow();

    // After the backup: animals (ids handed out), the leaked key revoked, and what a later release's migration adds:
    // a table with foreign keys to pets and api_keys, which blocked `pg_restore --clean`.
    const later: Pet[] = [];
    for (let index = 0; index < 3; index += 1) later.push(await createPet(`later-${index}`));
    const [leakyId, overlappingId, longLivedId] = [
      await keyId('leaky'),
      await keyId('overlapping'),
      await keyId('long-lived'),
    ];
    // The leaked key revoked; the issue's first finding: a key issued, one rotated with a short overlap, one with a
    // new lifetime.
    const [, late, overlappingReplacement, longLivedReplacement] = await apikeys(
      ['revoke', leakyId],
      ['create', 'late'],
      ['rotate', overlappingId, '--overlap', '10m'],
      ['rotate', longLivedId, '--expires-in', '90d'],
    );
    const issued = { late };
    const replacements = { overlapping: overlappingReplacement, longLived: longLivedReplacement };
    const working = [key, overlapping, longLived, issued.late, replacements.overlapping, replacements.longLived];
    const keysBefore = await keyRows();
    await project.sql(
      'CREATE TABLE adoptions (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, ' +
        'pet_id bigint NOT NULL REFERENCES pets (id), key_id bigint NOT NULL REFERENCES api_keys (id)); ' +
        `INSERT INTO adoptions (pet_id, key_id) VALUES (${kept[0].id}, ${leakyId})`,
    );
    await pollUntil(async () => (await statusWith(leaky)) === 401, {
      timeoutMs: 15_000,
      intervalMs: 250,
      what: 'the revoked key to be refused',
    });
    const highestIssued = Math.max(...later.map((pet) => pet.id));

    // The drill: stop api, restore, migrate, start api.
    await project.composeOk(['stop', 'api']);
    const restore = await project.shell(`docker compose run --rm -T backup restore ${file}`);
    process.stdout.write(`$ docker compose run --rm backup restore ${file}\n${restore.stdout}exit ${restore.code}\n`);
    expect(restore.code).toBe(0);
    const lines = restore.stdout.trim().split('\n');
    expect(lines[0]).toBe(`Restored ${file}: 5 animals, 4 API keys.`);
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^key kept as it is now: ${leakyId} "leaky" \\(revoked \\d{4}-.+Z, `)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^key kept as it is now: ${overlappingId} "overlapping" \\(expires .+, replaced by key ${await keyId('overlapping')}, .*; the backup had never expires`,
        ),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^key kept: ${await keyId('late')} "late", issued after this backup`)),
    );
    expect(lines).toContainEqual("keys: left as they are now, merged with the backup's by digest: 7 keys");
    expect(await keyRows()).toBe(keysBefore);
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^ids not reused: pets_id_seq continues after ${highestIssued}, `)),
    );
    expect(lines.at(-1)).toMatch(
      /^The backup's migrations are this database's\. Next: `docker compose run --rm migrate`/,
    );
    expect(await project.sql("SELECT to_regclass('public.adoptions') IS NULL")).toBe('t');

    expect((await project.compose(['run', '--rm', '-T', 'migrate'])).code).toBe(0);
    expect((await project.shell('docker compose up -d', {}, 300_000)).code).toBe(0);
    await project.waitForHealth('api', 'healthy', 120_000);

    expect((await allPets()).map((pet) => pet.name)).toEqual(kept.map((pet) => pet.name));
    expect(await statusWith(leaky)).toBe(401);
    expect(await Promise.all(working.map(statusWith))).toEqual(working.map(() => 200));
    const next = await createPet('after-restore');
    expect(next.id).toBeGreaterThan(highestIssued);

    // The same file again: the animals as the backup has them, the keys untouched.
    const keysAfter = await keyRows();
    await project.composeOk(['stop', 'api']);
    const again = await backup(`restore ${file}`);
    expect(again.code).toBe(0);
    expect(await keyRows()).toBe(keysAfter);
    expect((await project.shell('docker compose up -d', {}, 300_000)).code).toBe(0);
    await project.waitForHealth('api', 'healthy', 120_000);
    expect((await allPets()).map((pet) => pet.name)).toEqual(kept.map((pet) => pet.name));
  }, 480_000);

  it('an older release’s backup restored while the API runs: refused before anything changes, every request meanwhile 200', async () => {
    // The API as the drill above left it: started again after the restore, healthy.
    const { file } = await backupNow();
    await createPet('after-the-backup');
    // The live database a release ahead of the backup, as after an upgrade.
    await project.sql("INSERT INTO migrations (timestamp, name) VALUES (1999999999999, 'AddAdoptions1999999999999')");
    const [keysBefore, petsBefore] = [await keyRows(), await allPets()];
    const statuses: number[] = [];
    let restoring = true;
    // Lists, one at a time, for as long as the restore runs (bounded by it).
    const traffic = (async () => {
      while (restoring) {
        statuses.push((await fetch(`${project.origin}/v1/pets?limit=5`, { headers: bearer() })).status);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const restore = await project.shell(`docker compose run --rm -T backup restore ${file}`);
    restoring = false;
    await traffic;
    process.stdout.write(`$ docker compose run --rm backup restore ${file}\n${restore.stderr}exit ${restore.code}\n`);
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(
      /^backup: other sessions are connected to the database: .*animal_store_api \(\d+\).*, and the backup's migrations are not this database's \(it lacks AddAdoptions1999999999999\), a schema the running API was not built for; the database is untouched: stop the API first/m,
    );
    expect([await keyRows(), await allPets()]).toEqual([keysBefore, petsBefore]);
    expect(statuses.length).toBeGreaterThan(0);
    expect([...new Set(statuses)]).toEqual([200]);
    await project.sql("DELETE FROM migrations WHERE name = 'AddAdoptions1999999999999'");
  });

  it('refuses a later release’s backup, the database untouched', async () => {
    const later = "INSERT INTO migrations (timestamp, name) VALUES (1999999999999, 'AddAdoptions1999999999999')";
    await project.sql(later);
    const { file } = await backupNow();
    await project.sql('DELETE FROM migrations WHERE timestamp = 1999999999999');
    await createPet('after-the-later-backup');
    const untouched = async () => `${await project.sql('SELECT count(*) FROM pets')} ${await keyRows()}`;
    const before = await untouched();
    await project.composeOk(['stop', 'api']);
    const newer = await backup(`restore ${file}`);
    process.stdout.write(`$ docker compose run --rm backup restore ${file}\n${newer.stderr}exit ${newer.code}\n`);
    expect(newer.code).toBe(1);
    expect(newer.stderr).toContain(
      `backup: "${file}" was taken by a later release than this database's (it holds AddAdoptions1999999999999); the database is untouched: restore it with that release's image`,
    );
    expect(await untouched()).toBe(before);
  });

  it('says when the backup is older than the release, and which step comes next', async () => {
    const { file } = await backupNow();
    // The live database as a later release leaves it: one migration more than the backup holds.
    await project.sql("INSERT INTO migrations (timestamp, name) VALUES (1999999999999, 'AddAdoptions1999999999999')");
    await project.composeOk(['stop', 'api']);
    const restore = await backup(`restore ${file}`);
    process.stdout.write(`$ docker compose run --rm backup restore ${file}\n${restore.stdout}exit ${restore.code}\n`);
    expect(restore.code).toBe(0);
    expect(restore.stdout.trim().split('\n').at(-1)).toBe(
      "The backup is older than this database's release: it lacks AddAdoptions1999999999999. Next: " +
        '`docker compose run --rm migrate` (on Kubernetes, the migrate Job), then start the API (`docker compose up -d`).',
    );
  });
});

describe('retention', () => {
  it('BACKUP_KEEP=1 next to a hand-named copy and another file: the new backup and both files kept', async () => {
    const { file: first } = await backupNow();
    await writeFile(
      join(project.backupDir, 'animal-store-before-upgrade.dump'),
      await readFile(join(project.backupDir, first)),
    );
    await writeFile(join(project.backupDir, 'notes.txt'), 'kept by hand\n');
    const before = await files();
    const { file, logged } = await backupNow({ BACKUP_KEEP: '1' });
    expect(await files()).toEqual([...before.filter((name) => !/^animal-store-\d{8}T/.test(name)), file].sort());
    expect(
      logged.filter(
        (line) => line.msg === 'backup removed: past BACKUP_KEEP, BACKUP_KEEP_WEEKLY and BACKUP_KEEP_MONTHLY',
      ),
    ).not.toEqual([]);
  });

  it('BACKUP_KEEP=2, every animal deleted, two runs: the backup with animals kept, the drop logged at error level, the hold unhealthy until accept-shrink', async () => {
    const { file: full } = await backupNow({ BACKUP_KEEP: '2' });
    await project.sql('DELETE FROM pets');
    const runs = [await backupNow({ BACKUP_KEEP: '2' }), await backupNow({ BACKUP_KEEP: '2' })];
    const errors = runs.flatMap((run) => run.logged.filter((line) => line.level === 50));
    process.stdout.write(`${errors.map((line) => JSON.stringify(line)).join('\n')}\n`);
    expect(errors[0]).toMatchObject({
      msg: expect.stringMatching(/^backup holds far fewer rows than the newest kept one: nothing pruned this run/),
      pets: 0,
      newestKept: full,
    });
    expect(await files()).toContain(full);
    expect(await files()).toEqual(expect.arrayContaining(runs.map((run) => run.file)));

    // Held, the healthcheck says so; once the purge is accepted, retention runs at once and the hold ends.
    const health = () => backup('health', { BACKUP_KEEP: '2' });
    const held = await health();
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(
      /^backup: retention holds back \d+ backups with more than twice the rows of the newest/m,
    );
    const accepted = await backup('accept-shrink', { BACKUP_KEEP: '2' });
    process.stdout.write(`$ docker compose run --rm backup accept-shrink\n${accepted.stdout}exit ${accepted.code}\n`);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toMatch(
      new RegExp(
        `^Accepted: ${runs[1].file.replaceAll('.', '\\.')} \\(0 animals, \\d+ API keys\\) is the baseline; .* 2 backups kept\\.$`,
        'm',
      ),
    );
    expect((await files()).filter((name) => /^animal-store-\d{8}T\d{6}\.\d{3}Z\.dump$/.test(name))).toEqual(
      runs.map((run) => run.file).sort(),
    );
    expect((await health()).code).toBe(0);
  });
});

describe('failures that show', () => {
  it('writes the metric: the newest backup’s time and the failed runs', async () => {
    const { file } = await backupNow();
    const metrics = await readFile(join(project.backupDir, 'metrics/animal-store-backup.prom'), 'utf8');
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1]);
    const written = Date.parse(
      file.replace(/^animal-store-(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)\.(\d{3})Z\.dump$/, '$1-$2-$3T$4:$5:$6.$7Z'),
    );
    expect(Math.abs(value('animal_store_backup_last_success_timestamp_seconds') * 1000 - written)).toBeLessThan(5_000);
    expect(value('animal_store_backup_failures_total')).toBe(0);
  });

  it('SIGTERM during a dump blocked on a lock: the service ends within 2 s, no .partial left', async () => {
    const directory = join(project.backupDir, 'stop');
    await mkdir(directory);
    // A session holds an exclusive lock on pets: pg_dump waits for it.
    const locker = project.exec(
      'db',
      [
        'psql',
        '-U',
        'animal_store',
        '-d',
        'animal_store',
        '-c',
        'BEGIN; LOCK TABLE pets IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(30); COMMIT;',
      ],
      60_000,
    );
    await pollUntil(
      async () =>
        (await project.sql(
          "SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = 'pets'::regclass",
        )) === '1',
      {
        timeoutMs: 15_000,
        intervalMs: 250,
        what: 'the lock on pets',
      },
    );
    expect((await project.shell('docker compose up -d --no-deps backup', { BACKUP_DIR: directory })).code).toBe(0);
    await pollUntil(async () => (await readdir(directory)).some((name) => name.endsWith('.partial')), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'a dump under way',
    });
    // The engine's own client: docker-compose 1.29 alone takes seconds to start.
    const id = await project.container('backup');
    const started = Date.now();
    await docker(['stop', '-t', '10', id]);
    const stopMs = Date.now() - started;
    process.stdout.write(`docker stop backup during a lock-blocked dump: ${stopMs} ms\n`);
    expect((await inspect(id)).ExitCode).toBe(0);
    expect(stopMs).toBeLessThan(2_000);
    expect((await readdir(directory)).filter((name) => name.endsWith('.partial'))).toEqual([]);
    await project.sql(
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = 'pets'::regclass",
    );
    await locker;
  });

  it('the healthcheck: healthy after a run, unhealthy within a minute with the database stopped', async () => {
    const directory = join(project.backupDir, 'health');
    await mkdir(directory);
    // 5 s: a dump that takes seconds on a busy machine still leaves the newest backup younger than twice the interval.
    const settings = { BACKUP_DIR: directory, BACKUP_INTERVAL: '5s' };
    expect((await project.shell('docker compose up -d --no-deps backup', settings)).code).toBe(0);
    await project.waitForHealth('backup', 'healthy', 60_000);
    await project.composeOk(['stop', 'db']);
    const stopped = Date.now();
    await project.waitForHealth('backup', 'unhealthy', 60_000);
    process.stdout.write(`backup unhealthy ${Date.now() - stopped} ms after db stopped\n`);
    const id = await project.container('backup');
    const health = (await run(DOCKER, ['inspect', '--format', '{{json .State.Health.Log}}', id])).stdout;
    expect(health).toContain('the last backup failed');
    const metrics = await readFile(join(directory, 'metrics/animal-store-backup.prom'), 'utf8');
    expect(Number(/^animal_store_backup_failures_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    await project.composeOk(['stop', 'backup']);
    await project.composeOk(['start', 'db']);
  });
});
