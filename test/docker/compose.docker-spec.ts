import { expect } from '@jest/globals';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ComposeProject, containerLogs, docker, inspect, jsonLines } from './support/docker.js';
import { parseCurlInclude, ReadmeCommand, readmeCommands } from './support/readme.js';
import { pollUntil } from '../support/poll.js';

/**
 * docker-compose.yml as shipped, on a real engine, driven as an operator would from the README. The scenarios run in
 * order on one project: each starts from the state the previous one left.
 */
let project: ComposeProject;
let key = '';

beforeAll(async () => {
  project = await ComposeProject.create('compose');
});

afterAll(async () => {
  await project?.down();
});

/** Checks a README command's output against the comment lines printed under it. */
function expectAsPrinted({ command, expected }: ReadmeCommand, stdout: string): void {
  const json = expected.filter((line) => /^[[{]/.test(line)).map((line) => JSON.parse(line) as unknown);
  let body = stdout;
  if (/\s-i\s/.test(command)) {
    const response = parseCurlInclude(stdout);
    body = response.body;
    for (const line of expected) {
      const status = /^(\d{3})\b/.exec(line);
      if (status) expect({ command, status: response.status }).toEqual({ command, status: Number(status[1]) });
      const named = /with (.+?) headers/.exec(line)?.[1].split(/, | and /) ?? [];
      const missing = named.filter((name) => !(name.toLowerCase() in response.headers));
      expect({ command, missing }).toEqual({ command, missing: [] });
      const header = /^\d{3}, ([\w-]+): (.+)$/.exec(line);
      if (header) expect(response.headers[header[1].toLowerCase()]).toBe(header[2]);
    }
  }
  if (json.length > 0) expect(JSON.parse(body)).toEqual(json[0]);
}

/** The README's commands, against this project's published port. */
const onThisPort = (command: string) => command.replaceAll('127.0.0.1:3000', `127.0.0.1:${project.port}`);

describe('docker-compose.yml, as the README runs it', () => {
  it('comes up with nothing set: db healthy, migrate exits 0, api healthy within 60 s; the walkthrough works', async () => {
    const [up, createKey] = await readmeCommands('docker compose up');
    const started = Date.now();
    await project.shellOk(up.command, {}, 300_000);
    await project.waitForHealth('api', 'healthy', 60_000 - (Date.now() - started));
    const upToHealthy = Date.now() - started;
    process.stdout.write(`docker compose up -d to api healthy: ${(upToHealthy / 1000).toFixed(1)} s\n`);
    expect(upToHealthy).toBeLessThanOrEqual(60_000);
    expect((await inspect(await project.container('db'))).Health?.Status).toBe('healthy');
    const migrate = await inspect(await project.container('migrate'));
    expect({ running: migrate.Running, exitCode: migrate.ExitCode }).toEqual({ running: false, exitCode: 0 });
    expect(await project.logs('migrate')).toMatch(/Applied CreatePets\d+/);

    key = (await project.shellOk(`${createKey.command}\nprintf %s "$KEY"`)).trim();
    expect(key).toMatch(/^pet_[0-9A-Za-z]{32}$/);

    for (const step of await readmeCommands('curl -s -X POST')) {
      const { code, stdout } = await project.shell(onThisPort(step.command), { KEY: key });
      expect({ command: step.command, code }).toEqual({ command: step.command, code: 0 });
      expectAsPrinted(step, stdout);
    }
    // No METRICS_TOKEN set: production does not serve /metrics on the API's port.
    expect((await fetch(`${project.origin}/metrics`)).status).toBe(404);
  });

  it('runs the API as a non-root user that cannot write its own code; the health check follows the database', async () => {
    expect((await project.execOk('api', ['id', '-u'])).trim()).not.toBe('0');
    const targets = ['/app/dist/src/main.js', '/app/package.json', '/app/node_modules/pg/package.json', '/app/new'];
    const append = 'for target; do (echo x >> "$target") 2>/dev/null && echo "$target"; done; true';
    expect((await project.execOk('api', ['sh', '-c', append, 'sh', ...targets])).trim()).toBe('');

    await project.composeOk(['stop', 'db']);
    await project.waitForHealth('api', 'unhealthy', 60_000);
    await project.composeOk(['start', 'db']);
    await project.waitForHealth('api', 'healthy', 60_000);
  });

  it('stops api under load: exits 0 within stop_grace_period, no acknowledged create lost; start serves again', async () => {
    const acknowledged: number[] = [];
    let stopped = false;
    // Two clients, one create every 250 ms each: well inside the key's rate limit.
    const client = async (name: string) => {
      for (let index = 0; index < 400 && !stopped; index += 1) {
        const pacing = new Promise((resolve) => setTimeout(resolve, 250));
        try {
          const body = { name: `${name}-${index}`, categoryId: 1 };
          const response = await project.request(key, '/v1/pets', { body, signal: AbortSignal.timeout(5_000) });
          const created = (await response.json()) as { id: number };
          if (response.status === 201) acknowledged.push(created.id);
        } catch {
          // Refused once the container is gone: not acknowledged, so nothing is owed.
        }
        await pacing;
      }
    };
    const load = Promise.all([client('stop-a'), client('stop-b')]);
    await pollUntil(() => acknowledged.length >= 8, { timeoutMs: 20_000, what: 'creates acknowledged under load' });

    const api = await project.container('api');
    const before = Date.now();
    await project.composeOk(['stop', 'api']);
    const stopMs = Date.now() - before;
    stopped = true;
    await load;
    const state = await inspect(api);
    process.stdout.write(
      `docker-compose stop api: ${stopMs} ms, exit ${state.ExitCode}, ${acknowledged.length} acknowledged\n`,
    );
    expect({ running: state.Running, exitCode: state.ExitCode }).toEqual({ running: false, exitCode: 0 });
    expect(stopMs).toBeLessThan(15_000);

    await project.composeOk(['start', 'api']);
    await project.waitForHealth('api', 'healthy', 60_000);
    expect(Number(await project.sql(`SELECT count(*) FROM pets WHERE id IN (${acknowledged.join(',')})`))).toBe(
      acknowledged.length,
    );
    expect(await project.status(key)).toBe(200);
  });

  it('keeps the data across down and up', async () => {
    const pets = Number(await project.sql('SELECT count(*) FROM pets'));
    expect(pets).toBeGreaterThan(1);

    await project.composeOk(['down']);
    await project.up({}, 60_000);
    expect(Number(await project.sql('SELECT count(*) FROM pets'))).toBe(pets);
    expect(await project.status(key, '/v1/pets/1')).toBe(200);
  });
});

/** The `backup` service, as an operator runs it, on the project the scenarios above left up (their key and animals). */
describe('docker-compose.yml backups', () => {
  let file = '';
  let drillKey = '';
  const petStatuses = ['available', 'pending', 'sold'];
  const createPet = (name: string, index: number) =>
    project.createPet(drillKey, name, { categoryId: 1 + (index % 5), status: petStatuses[index % 3] });
  const allPets = () => project.allPets(drillKey);
  /** Every row of both tables, as one digest: equal digests, untouched tables. */
  const tablesDigest = () =>
    project.sql(
      "SELECT md5((SELECT coalesce(string_agg(p::text, ',' ORDER BY id), '') FROM pets p) || '|' || " +
        "(SELECT coalesce(string_agg(k::text, ',' ORDER BY id), '') FROM api_keys k))",
    );
  /** The backup command's stderr without Compose v1's own lines: its progress, and the exit status of a failed `run`. */
  const backupLines = ({ stderr, code }: { stderr: string; code: number }) =>
    stderr
      .split('\n')
      .map((line) => line.replace(/\r$/, ''))
      .filter((line) => line && !/^(Creating|Starting|Recreating) \S+\s+\.\.\./.test(line))
      .filter((line, index, lines) => !(index === lines.length - 1 && code !== 0 && line === String(code)));
  const backupFiles = async (directory = project.backupDir) =>
    (await readdir(directory)).filter((name) => name.endsWith('.dump')).sort();

  it('restores a backup after down -v, which leaves no volume and an empty database: exactly the animals it held, the keys working, later ones gone', async () => {
    // `up` took one at start; the second `up` (after `down`, above) found it younger than BACKUP_INTERVAL.
    const atStart = await backupFiles();
    expect(atStart).toHaveLength(1);
    expect(atStart[0]).toMatch(/^animal-store-\d{8}T\d{6}\.\d{3}Z\.dump$/);

    drillKey = await project.createKey('drill');
    // Besides the scenarios' animals, some of every category and status.
    const earlier = Number(await project.sql('SELECT count(*) FROM pets'));
    for (let index = 0; index < 50; index += 1) await createPet(`kept-${index}`, index);
    const backedUp = await allPets();
    const pets = earlier + 50;
    expect(backedUp).toHaveLength(pets);

    const now = await project.shell('docker compose run --rm -T backup now');
    expect(now.code).toBe(0);
    file = now.stdout.trim();
    expect(file).toMatch(/^animal-store-\d{8}T\d{6}\.\d{3}Z\.dump$/);
    const written = jsonLines(now.stderr).find((line) => line.msg === 'backup written');
    // The README's key and the drill's.
    expect(written).toMatchObject({ level: 30, file, pets, apiKeys: 2, bytes: expect.any(Number) });
    const { mode, size } = await stat(join(project.backupDir, file));
    expect({ mode: mode & 0o777, size }).toEqual({ mode: 0o600, size: written!.bytes });
    expect(await backupFiles()).toEqual([...atStart, file]);
    const list = await project.shellOk('docker compose run --rm -T backup list');
    expect(list.split('\n')[0]).toMatch(new RegExp(`^${file.replaceAll('.', '\\.')}\\s+${size} bytes\\s+\\d{4}-`));

    const later = [];
    for (let index = 0; index < 5; index += 1) later.push(await createPet(`later-${index}`, index));

    // The same start as after losing the disk, with a key of API_KEYS for clients that read during the restore.
    const readerKey = `reader-${randomBytes(16).toString('hex')}`;
    await project.composeOk(['down', '-v']);
    const label = `label=com.docker.compose.project=${project.name}`;
    expect((await docker(['volume', 'ls', '-q', '--filter', label])).trim()).toBe('');
    await project.up({ API_KEYS: readerKey }, 60_000);
    expect(Number(await project.sql('SELECT count(*) FROM pets'))).toBe(0);
    expect(Number(await project.sql('SELECT count(*) FROM api_keys'))).toBe(0);
    expect(await project.status(key)).toBe(401);
    expect(await backupFiles()).toEqual([...atStart, file]);

    // Clients read while the restore runs: a fault they may see is a 503, never a 500. One reads with the key of
    // API_KEYS (its list reads the pets being replaced), one with the restored key (its lookups read api_keys; 401
    // until the restore commits, under the failed-authentication budget), each inside the per-key rate limit.
    const statuses = new Map<string, number>();
    let restoring = true;
    const reader = async (name: string, key: string, intervalMs: number) => {
      for (let index = 0; index < 1_000 && restoring; index += 1) {
        const pacing = new Promise((resolve) => setTimeout(resolve, intervalMs));
        let answer = 'no answer';
        try {
          const response = await project.request(key, '/v1/pets?limit=100', { signal: AbortSignal.timeout(10_000) });
          await response.arrayBuffer();
          answer = String(response.status);
        } catch {
          // Counted as no answer.
        }
        statuses.set(`${name} ${answer}`, (statuses.get(`${name} ${answer}`) ?? 0) + 1);
        await pacing;
      }
    };
    const readers = Promise.all([reader('API_KEYS key', readerKey, 150), reader('restored key', drillKey, 1_000)]);
    const started = Date.now();
    const restore = await project.shell(`docker compose run --rm -T backup restore ${file}`);
    const restoreMs = Date.now() - started;
    restoring = false;
    await readers;
    // The database was migrated by the `up` after down -v: the same migrations as the backup's. Its key table was
    // empty, so the backup's keys come back, named.
    expect({ code: restore.code, stdout: restore.stdout }).toEqual({
      code: 0,
      stdout:
        `Restored ${file}: ${pets} animals, 2 API keys.\n` +
        'key brought back: 1 "first client", in the backup but gone from the live database (never expires, scopes all)\n' +
        'key brought back: 2 "drill", in the backup but gone from the live database (never expires, scopes all)\n' +
        "keys: left as they are now, merged with the backup's by digest: 2 keys\n" +
        "The backup's migrations are this database's. Next: " +
        '`docker compose run --rm migrate` (on Kubernetes, the migrate Job), then start the API (`docker compose up -d`).\n',
    });
    const restored = jsonLines(restore.stderr).find((line) => line.msg === 'backup restored');
    expect(restored).toMatchObject({ file, pets, apiKeys: 2, durationMs: expect.any(Number) });
    process.stdout.write(
      `backup now: ${String(written!.durationMs)} ms for ${size} bytes; restore: ${String(restored!.durationMs)} ms, ` +
        `${restoreMs} ms with docker compose run; answers while it ran: ${JSON.stringify(Object.fromEntries(statuses))}\n`,
    );
    const allowed = /^(API_KEYS key (200|503)|restored key (200|401|503))$/;
    expect([...statuses.keys()].filter((answer) => !allowed.test(answer))).toEqual([]);
    expect(statuses.get('API_KEYS key 200')).toBeGreaterThan(0);

    // The keys are known again once the service's cache of unknown keys has let go (KEY_CACHE_TTL_MS).
    for (const restoredKey of [drillKey, key]) {
      const known = async () => (await project.status(restoredKey)) === 200;
      await pollUntil(known, { timeoutMs: 15_000, intervalMs: 250, what: 'the restored keys to authenticate' });
    }
    expect(await allPets()).toEqual(backedUp);
    for (const pet of later) {
      expect(await project.status(drillKey, `/v1/pets/${pet.id}`)).toBe(404);
    }
    // Without its dependencies: `migrate` run first would apply what the restore left pending.
    const migrations = (await project.oneShot('api', ['npm', 'run', '-s', 'migration:show'])).trim().split('\n');
    expect(migrations.length).toBeGreaterThan(0);
    expect(migrations.filter((line) => !line.startsWith('[X] '))).toEqual([]);
  });

  it('refuses a truncated copy, a missing file and a file that is no backup: one line, exit 1, database untouched', async () => {
    // Created after the backup: a restore that went ahead would remove them.
    for (let index = 0; index < 3; index += 1) await createPet(`after-restore-${index}`, index);
    const before = await tablesDigest();
    const whole = await readFile(join(project.backupDir, file));
    await writeFile(join(project.backupDir, 'truncated-copy.dump'), whole.subarray(0, Math.floor(whole.length / 2)));
    await writeFile(join(project.backupDir, 'notes.dump'), 'not a backup\n');

    const incomplete = 'is not a complete backup \\(.+\\); the database is untouched';
    for (const [name, problem] of [
      ['truncated-copy.dump', `"truncated-copy\\.dump" ${incomplete}`],
      ['notes.dump', `"notes\\.dump" ${incomplete}`],
      ['missing.dump', 'no backup "missing\\.dump" in /backups: .+; the database is untouched\\.$'],
    ]) {
      // Without its dependencies, started by the restore above: the refusal is the script's.
      const command = `docker compose run --rm --no-deps -T backup restore ${name}`;
      const refused = await project.shell(command);
      process.stdout.write(`$ ${command}\n${refused.stderr}exit ${refused.code}\n`);
      const problemLine = expect.stringMatching(new RegExp(`^backup: ${problem}`));
      expect([name, refused.code, refused.stdout, backupLines(refused)]).toEqual([name, 1, '', [problemLine]]);
    }
    expect(await tablesDigest()).toBe(before);
    expect((await allPets()).filter((pet) => pet.name.startsWith('after-restore-'))).toHaveLength(3);
  });

  it('backs up every BACKUP_INTERVAL and keeps the newest BACKUP_KEEP: 3 files after 10 s at 2s', async () => {
    const directory = join(project.backupDir, 'interval');
    await mkdir(directory);
    const settings = { BACKUP_DIR: directory, BACKUP_INTERVAL: '2s', BACKUP_KEEP: '3' };
    await project.shellOk('docker compose up -d --no-deps backup', settings);
    const started = Date.now();
    const id = await project.container('backup');
    const written = async () =>
      jsonLines(await containerLogs(id))
        .filter((line) => line.msg === 'backup written')
        .map((line) => line.file);
    // One at start, then one every 2 s: the sixth is written 10 s after the first.
    const six = async () => (await written()).length >= 6;
    await pollUntil(six, { timeoutMs: 60_000, intervalMs: 250, what: 'six scheduled backups' });
    await project.composeOk(['stop', 'backup']);
    const elapsed = Date.now() - started;
    const files = await backupFiles(directory);
    process.stdout.write(`BACKUP_INTERVAL=2s BACKUP_KEEP=3: after ${elapsed} ms, ${files.length} files\n`);
    expect(elapsed).toBeGreaterThanOrEqual(10_000);
    expect(files).toEqual((await written()).slice(-3));
    expect(files).toHaveLength(3);
  });
});
