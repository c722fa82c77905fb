import { expect } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, ComposeProject, ok, ROOT } from './support/docker.js';
import { SESSION_TIMEOUTS } from '../../src/database/session-timeouts.js';

/** The last commit whose compose files connect `api`, `migrate` and `backup` as the bootstrap superuser. */
const BEFORE_ROLES = '9904a0d';
/** The last commit whose compose files mount every secret into every container: the release this one upgrades. */
const PREVIOUS_RELEASE = '089923d';

/**
 * docker-compose.yml's database roles: a volume made by the compose files from before them, upgraded by a plain `up`;
 * then each role holding only its job, each container only its own secret.
 */
describe('docker-compose.yml database roles', () => {
  let project: ComposeProject;
  let before: ComposeProject;
  let previous: ComposeProject;
  let directory = '';
  let key = '';

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'animal-store-before-roles-'));
    const extract = 'mkdir "$1/$2" && git -C "$0" archive "$2" docker-compose.yml compose | tar -x -C "$1/$2"';
    for (const commit of [BEFORE_ROLES, PREVIOUS_RELEASE])
      await check('bash', ['-c', extract, ROOT, directory, commit]);
    project = await ComposeProject.create('roles');
    // The same project name, so the same volumes, through the files of the releases before.
    before = project.withFiles([join(directory, BEFORE_ROLES, 'docker-compose.yml')]);
    previous = project.withFiles([join(directory, PREVIOUS_RELEASE, 'docker-compose.yml')]);
  });

  afterAll(async () => {
    await project?.down();
    await rm(directory, { recursive: true, force: true });
  });

  const asApi = (statement: string) => project.psql(statement, 'animal_store_api');
  /** The role's defaults as compose/roles.sh sets them. */
  const timeouts = Object.entries(SESSION_TIMEOUTS)
    .map(([name, ms]) => `${name}=${ms}`)
    .join(',');
  /** The secrets as the containers that own them read them: the superuser's in `db`, the owner's in `backup`. */
  const secret = async (service: string, file: string) =>
    (await project.execOk(service, ['cat', `/run/animal-store/${file}`])).trim();
  /** What the pg driver inside `api` answers a connection as `user` with `password`. */
  const connectFromApi = async (user: string, password: string) => {
    const script = `const url = new URL('postgres://db:5432/animal_store');
      [url.username, url.password] = process.argv.slice(1);
      const client = new (require('pg').Client)({ connectionString: url.href });
      client.connect().then(() => { console.log('connected'); return client.end(); }, (error) => console.log(error.message));`;
    // A generated password may start with "-": after `--` node takes it as an argument, not an option.
    const connect = await project.exec('api', ['node', '-e', script, '--', user, password]);
    return connect.stdout.trim() || connect.stderr;
  };

  it('a volume made before the roles, then run by the previous release, is upgraded by `up`: the same key and animals', async () => {
    await before.up();
    key = await before.createKey('old', 'api');
    await project.createPet(key, 'Rex');
    expect(await project.sql("SELECT tableowner FROM pg_tables WHERE tablename = 'pets'")).toBe('animal_store');
    // That release's service, connected as the superuser, made the requests' bounds its own defaults at start (this
    // image's service no longer does: as it did).
    await project.sql('ALTER ROLE animal_store IN DATABASE animal_store SET statement_timeout = 5000');
    const superuserSettings = "SELECT count(*) FROM pg_db_role_setting WHERE setrole = 'animal_store'::regrole";
    await before.composeOk(['down']);
    // The previous release: the roles, every secret in the one `secrets` volume; the superuser's timeouts left.
    await previous.up();
    expect(await project.status(key)).toBe(200);
    expect(await project.sql(superuserSettings)).toBe('1');
    await previous.composeOk(['down']);

    await project.up();
    expect(await project.status(key)).toBe(200);
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

  it('inside `api`: no file or variable holds the superuser’s or the owner’s password; connecting as either fails', async () => {
    const others = [await secret('db', 'postgres-password'), await secret('backup', 'owner-password')];
    expect(others.every((password) => password.length >= 32)).toBe(true);
    expect(await project.whereFound('api', others)).toBe('0');
    // With the one password it holds, the api's own, neither the superuser nor the owner.
    const own = await secret('api', 'api-password');
    for (const user of ['animal_store', 'animal_store_owner']) {
      expect({ user, output: await connectFromApi(user, own) }).toEqual({
        user,
        output: `password authentication failed for user "${user}"`,
      });
    }
  });

  it('the service’s role: no superuser, owns no table; PostgreSQL refuses it tables, large objects, migrations and keys; `up` puts its bounds back, the owner’s unbounded; backups work', async () => {
    expect(
      await project.sql(
        'SELECT rolsuper, rolcreatedb, rolcreaterole, (SELECT count(*) FROM pg_class WHERE relowner = r.oid) ' +
          "FROM pg_roles r WHERE rolname = 'animal_store_api'",
      ),
    ).toBe('f|f|f|0');
    const create = await asApi('CREATE TABLE intruder (id int)');
    expect(create.code).not.toBe(0);
    expect(create.stderr).toContain('permission denied for schema public');
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
      const { code, stderr } = await asApi(statement);
      expect([statement, code, stderr.trim()]).toEqual([statement, 1, `ERROR:  ${message}`]);
    }
    // What the service does need still works; its own defaults it may change (PostgreSQL lets any role alter itself):
    // the next `up` puts the bounds back.
    for (const statement of [
      'BEGIN; UPDATE api_keys SET last_used_at = now(); SELECT count(*) FROM migrations; ROLLBACK',
      'ALTER ROLE animal_store_api IN DATABASE animal_store SET statement_timeout = 0',
      "ALTER ROLE animal_store_api SET work_mem = '1GB'",
    ]) {
      await ok(statement, asApi(statement));
    }
    await project.composeOk(['up', '-d'], 300_000);
    expect(
      await project.sql(
        "SELECT setdatabase <> 0, setconfig FROM pg_db_role_setting WHERE setrole = 'animal_store_api'::regrole",
      ),
    ).toBe(`t|{${timeouts}}`);
    expect(await project.sql('SHOW statement_timeout', 'animal_store_owner')).toBe('0');
    // The owner's jobs: `up` ran the migrations as the owner; a backup too.
    const backup = await project.shellOk('docker compose run --rm -T backup now');
    expect(backup.trim()).toMatch(/^animal-store-\d{8}T\d{6}\.\d{3}Z\.dump$/);
  }, 300_000);

  it('the roles step gives psql no password on its command line', async () => {
    const passwords = [
      await secret('db', 'postgres-password'),
      await secret('backup', 'owner-password'),
      await secret('api', 'api-password'),
    ];
    // Every psql the script starts, with its arguments, as `ps` would show them.
    const traced =
      'psql() { echo "psql $*" >&2; command psql "$@"; }; export -f psql; exec bash /usr/local/bin/animal-store-roles';
    const run = await project.compose(['run', '--rm', '-T', '--entrypoint', 'bash', 'roles', '-c', traced]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('psql -XAtq');
    for (const password of passwords) expect(run.stderr).not.toContain(password);
  });

  it('rotating every secret as docs/operating.md says: the old api password refused, keys served, backups taken', async () => {
    const files = [
      '/run/animal-store/postgres-password',
      '/run/animal-store-owner/owner-password',
      '/run/animal-store-api/api-password',
      '/run/animal-store-api/cursor-secret',
    ];
    const cat = ['--entrypoint', 'sh', 'secrets', '-c', 'for file; do cat "$file"; echo; done', 'sh', ...files];
    const secrets = async () => (await project.composeOk(['run', '--rm', '--no-deps', ...cat])).trim().split('\n');
    const old = await secrets();
    await project.shellOk(
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
    const rotated = await secrets();
    expect(rotated.map((value, index) => value.length >= 32 && value !== old[index])).toEqual([true, true, true, true]);
    await project.waitForHealth('api', 'healthy', 120_000);
    expect(await project.status(key)).toBe(200);
    // The api runs with the new cursor secret, and its old password opens nothing.
    expect((await project.environment('api')).split('\n')).toContain(`CURSOR_SECRET=${rotated[3]}`);
    expect(await connectFromApi('animal_store_api', old[2])).toBe(
      'password authentication failed for user "animal_store_api"',
    );
    await project.shellOk('docker compose run --rm -T backup now');
  }, 300_000);
});
