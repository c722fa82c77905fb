import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ComposeProject, inspect } from './support/docker.js';
import { SESSION_TIMEOUTS } from '../../src/database/session-timeouts.js';
import { buildCopyWith, ensureBuilt } from '../support/built-service.js';

/** Longer than the requests' statement bound, which compose/roles.sh makes a default of the api's role. */
const SLOW_SECONDS = 8;
/** That bound as `SHOW statement_timeout` prints it. */
const REQUEST_BOUND = `${SESSION_TIMEOUTS.statement_timeout / 1000}s`;

/**
 * docker-compose.yml as shipped, then upgraded to a build with one more migration, one that runs longer than a
 * request may: the `migrate` service must apply it, and the api come back on the new build.
 */
describe('docker-compose.yml, upgraded to a build with a migration longer than a request may run', () => {
  let project: ComposeProject;
  let upgrade: Awaited<ReturnType<typeof buildCopyWith>>;
  let upgraded: ComposeProject;

  beforeAll(async () => {
    await ensureBuilt();
    upgrade = await buildCopyWith([{ name: 'SlowBackfill', sql: `SELECT pg_sleep(${SLOW_SECONDS})` }]);
    // The upgrade as a new image would bring it: both services that run the build run the copy's dist/.
    const override = join(upgrade.root, 'upgrade.override.yml');
    const dist = `${join(upgrade.root, 'dist')}:/app/dist:ro`;
    await writeFile(override, `services:\n  migrate:\n    volumes: ['${dist}']\n  api:\n    volumes: ['${dist}']\n`);
    project = await ComposeProject.create('upgrade');
    upgraded = project.withFiles(['docker-compose.yml', override]);
  }, 300_000);

  afterAll(async () => {
    await Promise.allSettled([project?.down(), upgrade?.remove()]);
  }, 150_000);

  it(`the migrate service applies a ${SLOW_SECONDS} s migration after the api has run; the api comes back healthy`, async () => {
    await project.up({}, 90_000);
    // The roles service made the requests' bound a default of the api's role: every new session of it starts with it.
    expect(await project.sql('SHOW statement_timeout', 'animal_store_api')).toBe(REQUEST_BOUND);
    expect(await project.sql('SELECT name FROM migrations')).not.toContain(upgrade.migrations[0]);
    const before = await project.container('migrate');

    const started = Date.now();
    await upgraded.composeOk(['up', '-d'], 300_000);
    const upMs = Date.now() - started;
    const migrate = await upgraded.container('migrate');
    expect(migrate).not.toBe(before);
    const state = await inspect(migrate);
    const migrateMs = Date.parse(state.FinishedAt) - Date.parse(state.StartedAt);
    process.stdout.write(
      `migrate service with ${upgrade.migrations[0]} (pg_sleep(${SLOW_SECONDS})): exit ${state.ExitCode}, ` +
        `ran ${(migrateMs / 1000).toFixed(1)} s; docker compose up -d of the upgrade: ${(upMs / 1000).toFixed(1)} s\n`,
    );
    expect({ running: state.Running, exitCode: state.ExitCode }).toEqual({ running: false, exitCode: 0 });
    expect(migrateMs).toBeGreaterThanOrEqual(SLOW_SECONDS * 1000);
    expect(await upgraded.logs('migrate')).toMatch(new RegExp(`Applied ${upgrade.migrations[0]} on db:5432/`));
    expect((await project.sql('SELECT name FROM migrations ORDER BY id')).split('\n').at(-1)).toBe(
      upgrade.migrations[0],
    );
    // Only the migration's own transaction went without the bound: the role's default is untouched.
    expect(await project.sql('SHOW statement_timeout', 'animal_store_api')).toBe(REQUEST_BOUND);

    await upgraded.waitForHealth('api', 'healthy', 90_000);
    const healthyMs = Date.now() - started;
    process.stdout.write(`docker compose up -d of the upgrade to api healthy: ${(healthyMs / 1000).toFixed(1)} s\n`);
    // The api runs the upgraded build, whose readiness counts the new migration among those that must be applied.
    const shown = await upgraded.oneShot('api', ['npm', 'run', '-s', 'migration:show']);
    expect(shown).toContain(`[X] ${upgrade.migrations[0]}`);
    expect(shown).not.toContain('[ ]');
    expect((await fetch(`${project.origin}/health/ready`)).status).toBe(200);
  });
});
