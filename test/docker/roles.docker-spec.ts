import { expect } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, ComposeProject, ROOT } from './support/docker.js';
import { SESSION_TIMEOUTS } from '../../src/database/session-timeouts.js';

/** The last commit whose compose files connect `api`, `migrate` and `backup` as the bootstrap superuser. */
const BEFORE_ROLES = '9904a0d';

/**
 * docker-compose.yml's database roles: a volume made by the compose files from before them, upgraded by a plain `up`;
 * then the service's role as it must be (no superuser, owns no table, cannot create), the owner's jobs still working.
 */
describe('docker-compose.yml database roles', () => {
  let project: ComposeProject;
  let before: ComposeProject;
  let directory = '';

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'animal-store-before-roles-'));
    await check('bash', [
      '-c',
      `git -C "$0" archive ${BEFORE_ROLES} docker-compose.yml compose | tar -x -C "$1"`,
      ROOT,
      directory,
    ]);
    project = await ComposeProject.create('roles');
    // The same project name, so the same volumes, through the files of the release before the roles.
    before = project.withFiles([join(directory, 'docker-compose.yml')]);
  });

  afterAll(async () => {
    await project?.down();
    await rm(directory, { recursive: true, force: true });
  });

  const status = async (key: string) =>
    (await fetch(`${project.origin}/v1/pets?limit=10`, { headers: { Authorization: `Bearer ${key}` } })).status;

  it('a volume made before the roles is upgraded by `up`: the same key and animals, served as animal_store_api', async () => {
    await before.composeOk(['up', '-d'], 300_000);
    await before.waitForHealth('api', 'healthy', 120_000);
    const key = (
      await before.composeOk(['run', '--rm', '-T', 'api', 'npm', 'run', '-s', 'apikey', '--', 'create', 'old'])
    )
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
    await before.composeOk(['down']);

    await project.composeOk(['up', '-d'], 300_000);
    await project.waitForHealth('api', 'healthy', 120_000);
    expect(await status(key)).toBe(200);
    const owners = await project.sql("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'");
    expect(owners).toBe('animal_store_owner');
    // The api's pool connects as its role; no session of the superuser but this one.
    const sessions = await project.sql(
      "SELECT count(*) FILTER (WHERE usename = 'animal_store_api') > 0, " +
        "count(*) FILTER (WHERE usename = 'animal_store' AND pid <> pg_backend_pid()) FROM pg_stat_activity " +
        "WHERE backend_type = 'client backend'",
    );
    expect(sessions).toBe('t|0');
  });

  it('the service’s role: no superuser, owns no table, CREATE TABLE refused; the timeouts it is made with', async () => {
    expect(
      await project.sql(
        'SELECT rolsuper, rolcreatedb, rolcreaterole, (SELECT count(*) FROM pg_class WHERE relowner = r.oid) ' +
          "FROM pg_roles r WHERE rolname = 'animal_store_api'",
      ),
    ).toBe('f|f|f|0');
    const create = await project.compose([
      'exec',
      '-T',
      'db',
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

  it('the owner’s jobs still work: the migrations and a backup', async () => {
    const migrate = await project.compose(['run', '--rm', '-T', 'migrate']);
    expect(migrate.code).toBe(0);
    const now = await project.shell('docker compose run --rm -T backup now');
    expect(now.code).toBe(0);
    expect(now.stdout.trim()).toMatch(/^animal-store-\d{8}T\d{6}\.\d{3}Z\.dump$/);
  });
});
