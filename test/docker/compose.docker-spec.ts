import { ComposeProject, docker } from './support/docker.js';
import { parseCurlInclude, ReadmeCommand, readmeCommands } from './support/readme.js';
import { pollUntil } from '../support/poll.js';

/**
 * docker-compose.yml as shipped, on a real engine, driven as an operator would from the README. The scenarios run in
 * order on one project: each starts from the state the previous one left.
 */
let project: ComposeProject;
let key = '';
const bearer = () => ({ Authorization: `Bearer ${key}` });

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
      for (const name of /with (.+?) headers/.exec(line)?.[1].split(/, | and /) ?? []) {
        expect({ command, header: name, present: name.toLowerCase() in response.headers }).toMatchObject({
          present: true,
        });
      }
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
    const result = await project.shell(up.command, {}, 300_000);
    expect(result.code).toBe(0);
    await project.waitForHealth('api', 'healthy', 60_000 - (Date.now() - started));
    const upToHealthy = Date.now() - started;
    process.stdout.write(`docker compose up -d to api healthy: ${(upToHealthy / 1000).toFixed(1)} s\n`);
    expect(upToHealthy).toBeLessThanOrEqual(60_000);
    expect(await project.healthOf('db')).toBe('healthy');
    const migrate = await project.inspect(await project.container('migrate'));
    expect({ running: migrate.Running, exitCode: migrate.ExitCode }).toEqual({ running: false, exitCode: 0 });
    expect(await project.logs('migrate')).toMatch(/Applied CreatePets\d+/);

    const created = await project.shell(`${createKey.command}\nprintf %s "$KEY"`);
    expect(created.code).toBe(0);
    key = created.stdout.trim();
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
    const api = await project.container('api');
    expect((await docker(['exec', api, 'id', '-u'])).trim()).not.toBe('0');
    for (const target of [
      '/app/dist/src/main.js',
      '/app/package.json',
      '/app/node_modules/pg/package.json',
      '/app/new',
    ]) {
      const write = await project.compose(['exec', '-T', 'api', 'sh', '-c', `echo x >> ${target}`]);
      expect({ target, refused: write.code !== 0 }).toEqual({ target, refused: true });
    }

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
          const response = await fetch(`${project.origin}/v1/pets`, {
            method: 'POST',
            headers: { ...bearer(), 'Content-Type': 'application/json' },
            body: JSON.stringify({ name: `${name}-${index}`, categoryId: 1 }),
            signal: AbortSignal.timeout(5_000),
          });
          const body = (await response.json()) as { id: number };
          if (response.status === 201) acknowledged.push(body.id);
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
    const state = await project.inspect(api);
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
    const response = await fetch(`${project.origin}/v1/pets?limit=1`, { headers: bearer() });
    expect(response.status).toBe(200);
  });

  it('keeps the data across down and up; down -v starts empty', async () => {
    const pets = Number(await project.sql('SELECT count(*) FROM pets'));
    expect(pets).toBeGreaterThan(1);

    await project.composeOk(['down']);
    await project.composeOk(['up', '-d'], 300_000);
    await project.waitForHealth('api', 'healthy', 60_000);
    expect(Number(await project.sql('SELECT count(*) FROM pets'))).toBe(pets);
    expect((await fetch(`${project.origin}/v1/pets/1`, { headers: bearer() })).status).toBe(200);

    await project.composeOk(['down', '-v']);
    const volumes = await docker([
      'volume',
      'ls',
      '-q',
      '--filter',
      `label=com.docker.compose.project=${project.name}`,
    ]);
    expect(volumes.trim()).toBe('');
    await project.composeOk(['up', '-d'], 300_000);
    await project.waitForHealth('api', 'healthy', 60_000);
    expect(Number(await project.sql('SELECT count(*) FROM pets'))).toBe(0);
    expect(Number(await project.sql('SELECT count(*) FROM api_keys'))).toBe(0);
    expect((await fetch(`${project.origin}/v1/pets`, { headers: bearer() })).status).toBe(401);
  });
});
