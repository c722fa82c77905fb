import { expect } from '@jest/globals';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MIGRATIONS } from '../migrations/index.js';
import type { Pet } from '../src/pets/dto/pet.dto.js';
import { ensureBuilt, ROOT, run } from './support/built-service.js';
import { freePort } from './support/database-server.js';
import { pollUntil } from './support/poll.js';
import { DEVELOPMENT_ENTRY, startService } from './support/service-process.js';
import { jsonBody, request } from './support/test-app.js';

// The service on its embedded PostgreSQL as `npm start` runs it (dev/start.ts), killed or crashing, and beside others.
const KEY = 'recovery-key-0123456789abcdef';
const auth = { authorization: `Bearer ${KEY}` };

let scratch: string;
/** One DATA_DIR for every test, each leaving its cluster stopped: one initdb and one migration run for all. */
let env: Record<string, string>;
beforeAll(async () => {
  await ensureBuilt();
  scratch = await mkdtemp(join(tmpdir(), 'animal-store-recovery-'));
  const dataDir = join(scratch, 'data');
  // As root, the embedded PostgreSQL runs as `postgres`, which must enter DATA_DIR.
  await chmod(scratch, 0o755);
  await mkdir(dataDir, { mode: 0o755 });
  env = { DATA_DIR: dataDir, EMBEDDED_POSTGRES_PORT: String(await freePort()), API_KEYS: KEY, LOG_LEVEL: 'warn' };
}, 300_000);
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** The PID PostgreSQL records in its postmaster.pid under DATA_DIR. */
const postmasterPid = (dataDir: string) =>
  Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);

/** Alive and not a zombie waiting for its new parent to reap it. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

async function createPet(origin: string, name: string, key = KEY): Promise<number> {
  const response = await request<Pet>(origin, '/v1/pets', jsonBody({ name, categoryId: 1 }, key));
  expect(response.status).toBe(201);
  return response.body.id;
}

/** `npm start` and the commands' npm scripts (dist/dev/), on the embedded PostgreSQL. */
const start = (env: Record<string, string>) => startService(env, { main: DEVELOPMENT_ENTRY });
const development = (script: string, args: string[], env: Record<string, string>) =>
  run(
    process.execPath,
    [join(ROOT, 'dist', 'dev', script), ...args],
    { PATH: process.env.PATH ?? '', ...env },
    120_000,
  );

describe('the embedded PostgreSQL when its service dies', () => {
  it('after a SIGKILL, the next start stops the PostgreSQL left running and serves the same data', async () => {
    const first = await start(env);
    const names = ['Rex', 'Tom', 'Kiki'];
    const ids: number[] = [];
    for (const name of names) ids.push(await createPet(first.origin, name));
    const orphan = postmasterPid(env.DATA_DIR);
    first.kill('SIGKILL');
    await first.exited;
    // Nothing ran on the way out: the cluster is still up, re-parented, holding DATA_DIR.
    expect(isRunning(orphan)).toBe(true);

    const second = await start(env);
    try {
      expect([...second.lines, ...second.stderr].join('\n')).toContain(
        `Stopping the PostgreSQL (process ${orphan}) left running by process ${first.pid}, which no longer exists`,
      );
      expect(isRunning(orphan)).toBe(false);
      const read = await Promise.all(ids.map((id) => request<Pet>(second.origin, `/v1/pets/${id}`, { headers: auth })));
      expect(read.map(({ status, body }) => [status, body.name])).toEqual(names.map((name) => [200, name]));
    } finally {
      second.kill('SIGTERM');
      await second.exited;
    }
  }, 180_000);

  it('after a SIGKILL, the key and migration commands stop what was left, work, and leave nothing running', async () => {
    const service = await start(env);
    await createPet(service.origin, 'Rex');
    const orphan = postmasterPid(env.DATA_DIR);
    service.kill('SIGKILL');
    await service.exited;

    const listed = await development('apikey.js', ['list'], env);
    expect(listed.code).toBe(0);
    expect(listed.stderr).toContain(`Stopping the PostgreSQL (process ${orphan})`);
    expect(isRunning(orphan)).toBe(false);
    const migrated = await development('migrations.js', ['show'], env);
    expect(migrated.code).toBe(0);
    // The command stopped the cluster it started for itself.
    expect(() => postmasterPid(env.DATA_DIR)).toThrow(/ENOENT/);
  }, 180_000);

  it('on an uncaught exception, the service stops its PostgreSQL on the way out', async () => {
    // A fault the service does not handle, raised on demand from inside the process.
    const crash = join(scratch, 'crash-on-sigusr2.mjs');
    await writeFile(crash, "process.on('SIGUSR2', () => { throw new Error('simulated crash'); });\n");
    const service = await start({ ...env, NODE_OPTIONS: `--import=${pathToFileURL(crash).href}` });
    const postgres = postmasterPid(env.DATA_DIR);
    service.kill('SIGUSR2');
    expect((await service.exited).code).toBe(1);
    await pollUntil(() => !isRunning(postgres), { timeoutMs: 15_000, what: 'the embedded PostgreSQL to stop' });
  }, 180_000);
});

describe('two services on one DATA_DIR', () => {
  it('refuses the second, naming the process that holds the cluster, while the first keeps serving', async () => {
    const first = await start(env);
    try {
      const second = await development('start.js', [], { ...env, PORT: String(await freePort()), HOST: '127.0.0.1' });
      expect(second.code).toBe(1);
      expect(second.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^A PostgreSQL already runs from .+ for process ${first.pid} \\(.*dist/dev/start\\.js\\), which is still running: stop that process, or set another DATA_DIR\\.$`,
          ),
        ),
      ]);
      expect((await fetch(`${first.origin}/health/ready`)).status).toBe(200);
    } finally {
      first.kill('SIGTERM');
      await first.exited;
    }
  }, 180_000);
});

describe('`npm start`, and the commands in a second shell beside it', () => {
  it('the commands find its database from DATA_DIR alone; on SIGTERM it stops the cluster and exits 0; then the commands say in one line what they tried', async () => {
    const { API_KEYS, ...keyless } = env;
    const service = await start(keyless);
    try {
      // Without API_KEYS the development wrapper gave the service a key of its own, kept in DATA_DIR.
      const key = (await readFile(join(env.DATA_DIR, 'dev-api-key'), 'utf8')).trim();
      expect(key).not.toBe(API_KEYS);
      expect(service.stderr).toContain(
        `Development API key (API_KEYS is unset): send Authorization: Bearer $(cat ${relative(ROOT, join(env.DATA_DIR, 'dev-api-key'))})`,
      );
      await createPet(service.origin, 'Embedded', key);
      // The second shell sets DATA_DIR only: EMBEDDED_POSTGRES_PORT is its default, 5433, not the service's.
      expect(await development('apikey.js', ['list'], { DATA_DIR: env.DATA_DIR })).toMatchObject({
        code: 0,
        stderr: 'No API keys yet: create one with `npm run apikey -- create <name>`.\n',
      });
      expect(await development('migrations.js', ['run'], { DATA_DIR: env.DATA_DIR })).toMatchObject({
        code: 0,
        stdout: `No pending migrations on 127.0.0.1:${env.EMBEDDED_POSTGRES_PORT}/animal_store: all ${MIGRATIONS.length} of this build are applied.\n`,
      });
    } finally {
      service.kill('SIGTERM');
    }
    expect(await service.exited).toEqual({ code: 0, signal: null });
    // The cluster went down with the service: its port no longer accepts connections.
    await expect(once(connect(Number(env.EMBEDDED_POSTGRES_PORT), '127.0.0.1'), 'connect')).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });

    // A command would start the cluster again, on a port something else holds: one line, no stack.
    const blockedPort = await freePort();
    const blocker = createServer().listen(blockedPort, '127.0.0.1');
    await once(blocker, 'listening');
    try {
      const failed = await development('apikey.js', ['list'], { ...env, EMBEDDED_POSTGRES_PORT: String(blockedPort) });
      const said = new RegExp(
        `^The embedded PostgreSQL in .* did not start on port ${blockedPort} .*EMBEDDED_POSTGRES_PORT`,
      );
      expect({ code: failed.code, lines: failed.stderr.split('\n').filter(Boolean) }).toEqual({
        code: 1,
        lines: [expect.stringMatching(said)],
      });
      expect(failed.stderr).not.toMatch(/undefined|\n\s+at /);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  }, 180_000);
});
