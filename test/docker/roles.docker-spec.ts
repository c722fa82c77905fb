import { expect } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, ComposeProject, ROOT } from './support/docker.js';
import { SESSION_TIMEOUTS } from '../../src/database/session-timeouts.js';

/** The last commit whose compose files connect `api`, `migrate` and `backup` as the bootstrap superuser. */
const BEFORE_ROLES = '9904a0d';
/** The last commit whose compose files mount every secret into every container: the release this one upgrades. */
const PREVIOUS_RELEASE = '089923d';

/**
 * docker-compose.yml's database roles: a volume made by the compose files from before them, upgraded by a plain `up`;
 * then the service's role as it must be (no superuser, owns no table, cannot create), the owner's jobs still working.
 */
describe('docker-compose.yml database roles', () => {
  let project: ComposeProject;
  let before: ComposeProject;
  let previous: ComposeProject;
  let directory = '';
  let key = '';

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'animal-store-before-roles-'));
    for (const commit of [BEFORE_ROLES, PREVIOUS_RELEASE]) {
      await check('bash', [
        '-c',
        `mkdir "$1/$2" && git -C "$0" archive "$2" docker-compose.yml compose | tar -x -C "$1/$2"`,
        ROOT,
        directory,
        commit,
      ]);
    }
    project = await ComposeProject.create('roles');
    // The same project name, so the same volumes, through the files of the releases before.
    before = project.withFiles([join(directory, BEFORE_ROLES, 'docker-compose.yml')]);
    previous = project.withFiles([join(directory, PREVIOUS_RELEASE, 'docker-compose.yml')]);
  });

  afterAll(async () => {
    await project?.down();
    await rm(directory, { recursive: true, force: true });
  });

  const status = async (key: string) =>
    (await fetch(`${project.origin}/v1/pets?limit=10`, { headers: { Authorization: `Bearer ${key}` } })).status;

  it('a volume made before the roles, then run by the previous release, is upgraded by `up`: the same key and animals', async () => {
    await before.composeOk(['up', '-d'], 300_000);
    await before.waitForHealth('api', 'healthy', 120_000);
    key = (await before.composeOk(['run', '--rm', '-T', 'api', 'npm', 'run', '-s', 'apikey', '--', 'create', 'old']))
      .trim()
      .split('\n')
      .at(-1)!;
    const created = await fetch(`${project.origin}/v1/pets`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(await project.sql("SELECT tableowner FROM pg_tables WHERE tablename = 'pets'")).toBe('animal_store');
    // That release's service, connected as the superuser, made the requests' bounds its own defaults at start (this
    // image's service no longer does: as it did).
    await project.sql('ALTER ROLE animal_store IN DATABASE animal_store SET statement_timeout = 5000');
    const superuserSettings = "SELECT count(*) FROM pg_db_role_setting WHERE setrole = 'animal_store'::regrole";
    await before.composeOk(['down']);
    // The previous release: the roles, every secret in the one `secrets` volume; the superuser's timeouts left.
    await previous.composeOk(['up', '-d'], 300_000);
    await previous.waitForHealth('api', 'healthy', 120_000);
    expect(await status(key)).toBe(200);
    expect(await project.sql(superuserSettings)).toBe('1');
    await previous.composeOk(['down']);

    await project.composeOk(['up', '-d'], 300_000);
    await project.waitForHealth('api', 'healthy', 120_000);
    expect(await status(key)).toBe(200);
    expect(await project.sql('SELECT count(*) FROM pets')).toBe('1');
    const owners = await project.sql("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'");
    expect(owners).toBe('animal_store_owner');
    // The api's pool connects as its role; no session of the superuser but this one.
    const sessions = await project.sql(
      "SELECT count(*) FILTER (WHERE usename = 'animal_store_api') > 0, " +
        "count(*) FILTER (WHERE usename = 'animal_store' AND pid <> pg_backend_pid()) FROM pg_stat_activity " +
        "WHERE backend_type = 'client backend'",
    );
    expect(sessions).toBe('t|0');
    expect(await project.sql(superuserSettings)).toBe('0');
  }, 480_000);

  it('the service’s role: no superuser, owns no table, CREATE TABLE refused; the timeouts it is made with', async () => {
    expect(
      await project.sql(
        'SELECT rolsuper, rolcreatedb, rolcreaterole, (SELECT count(*) FROM pg_class WHERE relowner = r.oid) ' +
          "FROM pg_roles r WHERE rolname = 'animal_store_api'",
      ),
    ).toBe('f|f|f|0');
    const create = await project.exec('db', [
      'psql',
      '-U',
      'animal_store_api',
      '-d',
      'animal_store',
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      'CREATE TABLE intruder (id int)',
    ]);
    expect(create.code).not.toBe(0);
    expect(create.stderr).toContain('permission denied for schema public');
    expect(await project.sql('SHOW statement_timeout', 'animal_store_api')).toBe(
      `${SESSION_TIMEOUTS.statement_timeout / 1000}s`,
    );
    // Set by the roles service on the service's role alone: the owner's jobs run unbounded, and a restart of the api
    // writes nothing (the same row version).
    expect(await project.sql('SHOW statement_timeout', 'animal_store_owner')).toBe('0');
    const settings = () =>
      project.sql('SELECT s.setrole::regrole, s.setconfig, s.xmin FROM pg_db_role_setting s ORDER BY 1');
    const before = await settings();
    expect(before).toMatch(
      new RegExp(
        `^animal_store_api\\|\\{${Object.entries(SESSION_TIMEOUTS)
          .map(([name, ms]) => `${name}=${ms}`)
          .join(',')}\\}\\|\\d+$`,
        'm',
      ),
    );
    await project.composeOk(['restart', 'api']);
    await project.waitForHealth('api', 'healthy', 120_000);
    expect(await settings()).toBe(before);
  });

  /** The secrets as the containers that own them read them: the superuser's in `db`, the owner's in `backup`. */
  const secret = async (service: string, file: string) =>
    (await project.execOk(service, ['cat', `/run/animal-store/${file}`])).trim();

  it('inside `api`: no file or variable holds the superuser’s or the owner’s password; connecting as either fails', async () => {
    const others = [await secret('db', 'postgres-password'), await secret('backup', 'owner-password')];
    expect(others.every((password) => password.length >= 32)).toBe(true);
    const found = await project.exec('api', [
      'sh',
      '-c',
      // Every file an attacker running as the service could read, and the environment of every process it can see.
      'grep -rlsF -e "$0" -e "$1" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev; ' +
        'cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n" | grep -cF -e "$0" -e "$1"',
      ...others,
    ]);
    expect(found.stdout.trim()).toBe('0');
    // With the one password it holds, the api's own, neither the superuser nor the owner.
    for (const user of ['animal_store', 'animal_store_owner']) {
      const connect = await project.exec('api', [
        'node',
        '-e',
        `const pg = require('pg');
         const url = new URL('postgres://db:5432/animal_store');
         url.username = process.argv[1];
         url.password = require('node:fs').readFileSync('/run/animal-store/api-password', 'utf8');
         const client = new pg.Client({ connectionString: url.href });
         client.connect().then(() => { console.log('connected'); return client.end(); }, (error) => { console.log(error.message); process.exitCode = 1; });`,
        user,
      ]);
      expect({ user, output: connect.stdout.trim() || connect.stderr }).toEqual({
        user,
        output: `password authentication failed for user "${user}"`,
      });
    }
  });

  it('as the service’s role, PostgreSQL refuses large objects, writing migrations and changing keys; backups keep working', async () => {
    const asApi = (statement: string) =>
      project.exec('db', [
        'psql',
        '-U',
        'animal_store_api',
        '-d',
        'animal_store',
        '-v',
        'ON_ERROR_STOP=1',
        '-c',
        statement,
      ]);
    const refused: Record<string, string> = {
      'SELECT lo_create(0)': 'permission denied for function lo_create',
      "SELECT lo_from_bytea(0, 'x')": 'permission denied for function lo_from_bytea',
      "INSERT INTO migrations (timestamp, name) VALUES (9999999999999, 'Future9999999999999')":
        'permission denied for table migrations',
      'DELETE FROM migrations': 'permission denied for table migrations',
      'UPDATE api_keys SET revoked_at = NULL, scopes = NULL': 'permission denied for table api_keys',
      "INSERT INTO api_keys (name, digest) VALUES ('minted', 'x')": 'permission denied for table api_keys',
    };
    for (const [statement, message] of Object.entries(refused)) {
      const result = await asApi(statement);
      expect({ statement, code: result.code, error: result.stderr.trim() }).toEqual({
        statement,
        code: 1,
        error: `ERROR:  ${message}`,
      });
    }
    // What the service does need still works.
    expect(
      (await asApi('BEGIN; UPDATE api_keys SET last_used_at = now(); SELECT count(*) FROM migrations; ROLLBACK')).code,
    ).toBe(0);
    // Its own defaults it may change (PostgreSQL lets any role alter itself); the next `up` puts the bounds back.
    expect((await asApi('ALTER ROLE animal_store_api IN DATABASE animal_store SET statement_timeout = 0')).code).toBe(
      0,
    );
    expect((await asApi("ALTER ROLE animal_store_api SET work_mem = '1GB'")).code).toBe(0);
    await project.composeOk(['up', '-d'], 300_000);
    expect(
      await project.sql(
        "SELECT setdatabase <> 0, setconfig FROM pg_db_role_setting WHERE setrole = 'animal_store_api'::regrole",
      ),
    ).toBe(
      `t|{${Object.entries(SESSION_TIMEOUTS)
        .map(([name, ms]) => `${name}=${ms}`)
        .join(',')}}`,
    );
    const now = await project.shell('docker compose run --rm -T backup now');
    expect({ code: now.code, stderr: now.code === 0 ? '' : now.stderr }).toEqual({ code: 0, stderr: '' });
  }, 300_000);

  it('the roles step gives psql no password on its command line', async () => {
    const passwords = [await secret('db', 'postgres-password'), await secret('backup', 'owner-password')];
    passwords.push((await project.execOk('api', ['cat', '/run/animal-store/api-password'])).trim());
    // Every psql the script starts, with its arguments, as `ps` would show them.
    const run = await project.compose([
      'run',
      '--rm',
      '-T',
      '--entrypoint',
      'bash',
      'roles',
      '-c',
      'psql() { echo "psql $*" >&2; command psql "$@"; }; export -f psql; exec bash /usr/local/bin/animal-store-roles',
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('psql -XAtq');
    for (const password of passwords) expect(run.stderr).not.toContain(password);
  });

  it('the owner’s jobs still work: the migrations and a backup', async () => {
    const migrate = await project.compose(['run', '--rm', '-T', 'migrate']);
    expect(migrate.code).toBe(0);
    const now = await project.shell('docker compose run --rm -T backup now');
    expect(now.code).toBe(0);
    expect(now.stdout.trim()).toMatch(/^animal-store-\d{8}T\d{6}\.\d{3}Z\.dump$/);
  });

  it('rotating every secret as docs/operating.md says: the old api password refused, keys served, backups taken', async () => {
    const files = [
      '/run/animal-store/postgres-password',
      '/run/animal-store-owner/owner-password',
      '/run/animal-store-api/api-password',
      '/run/animal-store-api/cursor-secret',
    ];
    const secrets = async () =>
      (
        await project.composeOk([
          'run',
          '--rm',
          '--no-deps',
          '--entrypoint',
          'sh',
          'secrets',
          '-c',
          'for file; do cat "$file"; echo; done',
          'sh',
          ...files,
        ])
      )
        .trim()
        .split('\n');
    const old = await secrets();
    const rotate = await project.shell(
      [
        `docker compose run --rm --no-deps --entrypoint rm secrets ${files.join(' ')}`,
        'docker compose up -d secrets',
        "docker compose exec -T db psql -U animal_store -d animal_store -v ON_ERROR_STOP=1 <<'SQL'",
        '\\set password `cat /run/animal-store/postgres-password`',
        "ALTER ROLE animal_store PASSWORD :'password';",
        'SQL',
        'docker compose up -d',
        'docker compose restart api backup',
      ].join('\n'),
      {},
      300_000,
    );
    expect({ code: rotate.code, stderr: rotate.code === 0 ? '' : rotate.stderr }).toEqual({ code: 0, stderr: '' });
    const rotated = await secrets();
    expect(rotated.map((value, index) => value.length >= 32 && value !== old[index])).toEqual([true, true, true, true]);
    await project.waitForHealth('api', 'healthy', 120_000);
    expect(await status(key)).toBe(200);
    // The api runs with the new cursor secret, and its old password opens nothing.
    const environ = await project.exec('api', ['sh', '-c', 'tr "\\0" "\\n" < /proc/1/environ']);
    expect(environ.stdout.split('\n')).toContain(`CURSOR_SECRET=${rotated[3]}`);
    const connect = await project.exec('api', [
      'node',
      '-e',
      `const pg = require('pg');
       const url = new URL('postgres://animal_store_api@db:5432/animal_store');
       url.password = process.argv[1];
       const client = new pg.Client({ connectionString: url.href });
       client.connect().then(() => { console.log('connected'); return client.end(); }, (error) => console.log(error.message));`,
      // A generated password may start with "-": after `--` node takes it as an argument, not an option.
      '--',
      old[2],
    ]);
    expect(connect.stdout.trim() || connect.stderr).toBe('password authentication failed for user "animal_store_api"');
    const now = await project.shell('docker compose run --rm -T backup now');
    expect({ code: now.code, stderr: now.code === 0 ? '' : now.stderr }).toEqual({ code: 0, stderr: '' });
  }, 300_000);
});
