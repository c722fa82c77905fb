import { expect } from '@jest/globals';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ComposeProject, docker, inspect, jsonLines, Pet } from './support/docker.js';
import { pollUntil } from '../support/poll.js';

/**
 * compose/backup.sh on the shipped docker-compose.yml, in the days after a backup: a restore after keys changed and a
 * later release's objects appeared; the release boundary and the running API guarded; retention; the healthcheck, the
 * metric and a stop during a dump. The scenarios run in order on one project.
 */
let project: ComposeProject;
let key = '';

beforeAll(async () => {
  project = await ComposeProject.create('backup');
  await project.up();
  key = await project.createKey('drill');
});

afterAll(async () => {
  await project?.down();
});

/** `apikey` commands, in order, in one `migrate` container (as the owner): what each printed last (a new key). */
async function apikeys(...commands: string[][]): Promise<string[]> {
  const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
  const script = commands.map((args) => `npm run -s apikey -- ${args.map(quote).join(' ')} && echo`).join(' && ');
  const out = await project.oneShot('migrate', ['sh', '-c', script]);
  const printed = out.trim().split('\n\n');
  expect(printed).toHaveLength(commands.length);
  return printed.map((lines) => lines.trim().split('\n').at(-1)!);
}
const keyId = (name: string) => project.sql(`SELECT max(id) FROM api_keys WHERE name = '${name}'`);
/** The keys' rows, to compare one restore with the next. */
const keyRows = () =>
  project.sql("SELECT string_agg((to_jsonb(k) - 'last_used_at')::text, ',' ORDER BY id) FROM api_keys k");

const createPet = (name: string) => project.createPet(key, name);
const allPets = () => project.allPets(key);
const statusWith = (token: string) => project.status(token);

/** The backup command, as `docker compose run --rm backup` runs it, without its dependencies: the stack is up. */
const backup = (command: string, settings: NodeJS.ProcessEnv = {}) =>
  project.shell(`docker compose run --rm --no-deps -T backup ${command}`, settings);

async function backupNow(settings: NodeJS.ProcessEnv = {}) {
  const now = await backup('now', settings);
  expect(now.code).toBe(0);
  return { file: now.stdout.trim(), logged: jsonLines(now.stderr) };
}

const files = async (directory = project.backupDir) => (await readdir(directory)).sort();
/** A metric of the backup service's textfile in `directory`. */
const metric = async (name: string, directory = project.backupDir) => {
  const metrics = await readFile(join(directory, 'metrics/animal-store-backup.prom'), 'utf8');
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1]);
};
/** A later release's migration, recorded by hand. */
const LATER = 'AddAdoptions1999999999999';

describe('restore, whatever happened after the backup', () => {
  const NAMES = ['leaky', 'overlapping', 'long-lived'];
  it('keys issued, rotated and revoked since, a later release’s objects, ids issued since: the drill brings back the backup’s animals, every key as it is now', async () => {
    const [leaky, overlapping, longLived] = await apikeys(...NAMES.map((name) => ['create', name]));
    const kept: Pet[] = [];
    for (let index = 0; index < 5; index += 1) kept.push(await createPet(`kept-${index}`));
    const { file } = await backupNow();

    // After the backup: animals (ids handed out), the leaked key revoked, and what a later release's migration adds:
    // a table with foreign keys to pets and api_keys, which blocked `pg_restore --clean`.
    const later: Pet[] = [];
    for (let index = 0; index < 3; index += 1) later.push(await createPet(`later-${index}`));
    const [leakyId, overlappingId, longLivedId] = await Promise.all(NAMES.map(keyId));
    // The leaked key revoked, a key issued, one rotated with a short overlap, one with a new lifetime.
    const [, ...since] = await apikeys(
      ['revoke', leakyId],
      ['create', 'late'],
      ['rotate', overlappingId, '--overlap', '10m'],
      ['rotate', longLivedId, '--expires-in', '90d'],
    );
    const working = [key, overlapping, longLived, ...since];
    const [lateId, replacementId, keysBefore] = [await keyId('late'), await keyId('overlapping'), await keyRows()];
    await project.sql(
      'CREATE TABLE adoptions (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, ' +
        'pet_id bigint NOT NULL REFERENCES pets (id), key_id bigint NOT NULL REFERENCES api_keys (id)); ' +
        `INSERT INTO adoptions (pet_id, key_id) VALUES (${kept[0].id}, ${leakyId})`,
    );
    const refused = async () => (await statusWith(leaky)) === 401;
    await pollUntil(refused, { timeoutMs: 15_000, intervalMs: 250, what: 'the revoked key to be refused' });
    const highestIssued = Math.max(...later.map((pet) => pet.id));

    // The drill: stop api, restore, migrate, start api.
    await project.composeOk(['stop', 'api']);
    const restore = await project.shell(`docker compose run --rm -T backup restore ${file}`);
    process.stdout.write(`$ docker compose run --rm backup restore ${file}\n${restore.stdout}exit ${restore.code}\n`);
    expect(restore.code).toBe(0);
    const lines = restore.stdout.trim().split('\n');
    expect(lines[0]).toBe(`Restored ${file}: 5 animals, 4 API keys.`);
    const line = (pattern: string) => expect.stringMatching(new RegExp(`^${pattern}`));
    expect(lines).toEqual(
      expect.arrayContaining([
        line(`key kept as it is now: ${leakyId} "leaky" \\(revoked \\d{4}-.+Z, `),
        line(
          `key kept as it is now: ${overlappingId} "overlapping" \\(expires .+, replaced by key ${replacementId}, .*; the backup had never expires`,
        ),
        line(`key kept: ${lateId} "late", issued after this backup`),
        "keys: left as they are now, merged with the backup's by digest: 7 keys",
        line(`ids not reused: pets_id_seq continues after ${highestIssued}, `),
      ]),
    );
    expect(lines.at(-1)).toMatch(
      /^The backup's migrations are this database's\. Next: `docker compose run --rm migrate`/,
    );
    expect(await keyRows()).toBe(keysBefore);
    expect(await project.sql("SELECT to_regclass('public.adoptions') IS NULL")).toBe('t');

    await project.composeOk(['run', '--rm', '-T', 'migrate']);
    await project.up();

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
    await project.up();
    expect((await allPets()).map((pet) => pet.name)).toEqual(kept.map((pet) => pet.name));
  }, 480_000);

  it('an older release’s backup: refused while the API runs, every request meanwhile 200; once it is stopped, restored with the next step named', async () => {
    // The API as the drill above left it: started again after the restore, healthy.
    const { file } = await backupNow();
    await createPet('after-the-backup');
    // The live database a release ahead of the backup, as after an upgrade.
    await project.sql(`INSERT INTO migrations (timestamp, name) VALUES (1999999999999, '${LATER}')`);
    const [keysBefore, petsBefore] = [await keyRows(), await allPets()];
    const statuses: number[] = [];
    let restoring = true;
    // Lists, one at a time, for as long as the restore runs (bounded by it).
    const traffic = (async () => {
      while (restoring) {
        statuses.push(await project.status(key, '/v1/pets?limit=5'));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const refused = await project.shell(`docker compose run --rm -T backup restore ${file}`);
    restoring = false;
    await traffic;
    process.stdout.write(`$ docker compose run --rm backup restore ${file}\n${refused.stderr}exit ${refused.code}\n`);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^backup: other sessions are connected to the database: .*animal_store_api \(\d+\).*, and the backup's migrations are not this database's \(it lacks AddAdoptions1999999999999\), a schema the running API was not built for; the database is untouched: stop the API first/m,
    );
    expect([await keyRows(), await allPets()]).toEqual([keysBefore, petsBefore]);
    expect(statuses.length).toBeGreaterThan(0);
    expect([...new Set(statuses)]).toEqual([200]);

    await project.composeOk(['stop', 'api']);
    const restore = await backup(`restore ${file}`);
    process.stdout.write(`$ docker compose run --rm backup restore ${file}\n${restore.stdout}exit ${restore.code}\n`);
    expect(restore.code).toBe(0);
    expect(restore.stdout.trim().split('\n').at(-1)).toBe(
      `The backup is older than this database's release: it lacks ${LATER}. Next: ` +
        '`docker compose run --rm migrate` (on Kubernetes, the migrate Job), then start the API (`docker compose up -d`).',
    );
  });

  it('refuses a later release’s backup, the database untouched', async () => {
    await project.sql(`INSERT INTO migrations (timestamp, name) VALUES (1999999999999, '${LATER}')`);
    const { file } = await backupNow();
    await project.sql('DELETE FROM migrations WHERE timestamp = 1999999999999');
    // After the backup, with the API stopped by the restore above: what a restore that went ahead would remove.
    await project.sql("INSERT INTO pets (name, category_id) VALUES ('after-the-later-backup', 1)");
    const untouched = async () => `${await project.sql('SELECT count(*) FROM pets')} ${await keyRows()}`;
    const before = await untouched();
    const newer = await backup(`restore ${file}`);
    process.stdout.write(`$ docker compose run --rm backup restore ${file}\n${newer.stderr}exit ${newer.code}\n`);
    expect(newer.code).toBe(1);
    expect(newer.stderr).toContain(
      `backup: "${file}" was taken by a later release than this database's (it holds ${LATER}); the database is untouched: restore it with that release's image`,
    );
    expect(await untouched()).toBe(before);
  });
});

describe('retention', () => {
  it('BACKUP_KEEP=1 next to a hand-named copy and another file: the new backup and both files kept; the metric', async () => {
    const { file: first } = await backupNow();
    await writeFile(
      join(project.backupDir, 'animal-store-before-upgrade.dump'),
      await readFile(join(project.backupDir, first)),
    );
    await writeFile(join(project.backupDir, 'notes.txt'), 'kept by hand\n');
    const before = await files();
    const { file, logged } = await backupNow({ BACKUP_KEEP: '1' });
    // The metric: the newest backup's time, no failed run.
    const taken = file.replace(
      /^animal-store-(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)\.(\d{3})Z\.dump$/,
      '$1-$2-$3T$4:$5:$6.$7Z',
    );
    const lastSuccess = await metric('animal_store_backup_last_success_timestamp_seconds');
    expect(Math.abs(lastSuccess * 1000 - Date.parse(taken))).toBeLessThan(5_000);
    expect(await metric('animal_store_backup_failures_total')).toBe(0);
    expect(await files()).toEqual([...before.filter((name) => !/^animal-store-\d{8}T/.test(name)), file].sort());
    expect(
      logged.filter(
        (line) => line.msg === 'backup removed: past BACKUP_KEEP, BACKUP_KEEP_WEEKLY and BACKUP_KEEP_MONTHLY',
      ),
    ).not.toEqual([]);
  });

  it('BACKUP_KEEP=2, every animal deleted, two runs: the backup with animals kept, the drop logged at error level, the hold unhealthy until accept-shrink', async () => {
    // The hold's own lines and accept-shrink's report, exactly: test/backup-script.spec.ts ("a purge").
    const keep = { BACKUP_KEEP: '2' };
    const { file: full } = await backupNow(keep);
    await project.sql('DELETE FROM pets');
    const runs = [await backupNow(keep), await backupNow(keep)];
    const errors = runs.flatMap((run) => run.logged.filter((line) => line.level === 50));
    expect(errors[0]).toMatchObject({
      msg: expect.stringMatching(/^backup holds far fewer rows than the newest kept one: nothing pruned this run/),
      pets: 0,
      newestKept: full,
    });
    expect(await files()).toEqual(expect.arrayContaining([full, ...runs.map((run) => run.file)]));
    const held = await backup('health', keep);
    expect(held.stderr).toMatch(
      /^backup: retention holds back \d+ backups with more than twice the rows of the newest/m,
    );
    expect(held.code).toBe(1);
    expect((await backup('accept-shrink', keep)).code).toBe(0);
    const dumps = (await files()).filter((name) => /^animal-store-\d{8}T\d{6}\.\d{3}Z\.dump$/.test(name));
    expect(dumps).toEqual(runs.map((run) => run.file).sort());
    expect((await backup('health', keep)).code).toBe(0);
  });
});

describe('failures that show', () => {
  it('SIGTERM during a dump blocked on a lock: the service ends within 2 s, no .partial left', async () => {
    const directory = join(project.backupDir, 'stop');
    await mkdir(directory);
    // A session holds an exclusive lock on pets: pg_dump waits for it.
    const lock = 'BEGIN; LOCK TABLE pets IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(30); COMMIT;';
    const locker = project.psql(lock, 'animal_store', 'db', 60_000);
    const locks = "FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = 'pets'::regclass";
    const locked = async () => (await project.sql(`SELECT count(*) ${locks}`)) === '1';
    await pollUntil(locked, { timeoutMs: 15_000, intervalMs: 250, what: 'the lock on pets' });
    await project.shellOk('docker compose up -d --no-deps backup', { BACKUP_DIR: directory });
    const dumping = async () => (await readdir(directory)).some((name) => name.endsWith('.partial'));
    await pollUntil(dumping, { timeoutMs: 30_000, intervalMs: 250, what: 'a dump under way' });
    // The engine's own client: docker-compose 1.29 alone takes seconds to start.
    const id = await project.container('backup');
    const started = Date.now();
    await docker(['stop', '-t', '10', id]);
    const stopMs = Date.now() - started;
    process.stdout.write(`docker stop backup during a lock-blocked dump: ${stopMs} ms\n`);
    expect((await inspect(id)).ExitCode).toBe(0);
    expect(stopMs).toBeLessThan(2_000);
    expect((await readdir(directory)).filter((name) => name.endsWith('.partial'))).toEqual([]);
    await project.sql(`SELECT pg_terminate_backend(pid) ${locks}`);
    await locker;
  });

  it('the healthcheck: healthy after a run, unhealthy within a minute with the database stopped', async () => {
    const directory = join(project.backupDir, 'health');
    await mkdir(directory);
    // 5 s: a dump that takes seconds on a busy machine still leaves the newest backup younger than twice the interval.
    const settings = { BACKUP_DIR: directory, BACKUP_INTERVAL: '5s' };
    await project.shellOk('docker compose up -d --no-deps backup', settings);
    await project.waitForHealth('backup', 'healthy', 60_000);
    await project.composeOk(['stop', 'db']);
    const stopped = Date.now();
    await project.waitForHealth('backup', 'unhealthy', 60_000);
    process.stdout.write(`backup unhealthy ${Date.now() - stopped} ms after db stopped\n`);
    const checks = (await inspect(await project.container('backup'))).Health?.Log ?? [];
    expect(checks.map((check) => check.Output).join('\n')).toContain('the last backup failed');
    expect(await metric('animal_store_backup_failures_total', directory)).toBeGreaterThan(0);
    await project.composeOk(['stop', 'backup']);
    await project.composeOk(['start', 'db']);
  });
});
