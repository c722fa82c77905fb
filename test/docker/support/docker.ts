import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../support/database-server.js';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** Debian's client: it builds with BuildKit without buildx (see test/docker/global-setup.ts). */
export const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
/** The image both compose files run (built by the global setup from the project's Dockerfile). */
export const IMAGE = 'animal-store:local';
/** The base images' variables: the stand-ins, set by the global setup (test/docker/stand-ins/build.sh). */
const BASE_IMAGE_VARIABLES = ['NODE_IMAGE', 'POSTGRES_IMAGE', 'HAPROXY_IMAGE', 'REDIS_IMAGE'];

export type Pet = { id: number; name: string; categoryId: number; status: string };
export type Result = { code: number; stdout: string; stderr: string };

/** Runs a program to its end (bounded by `timeoutMs`); a non-zero exit is a result, not an error. */
export function run(
  file: string,
  args: string[],
  { env, cwd = ROOT, timeoutMs = 120_000 }: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<Result> {
  return new Promise((resolve) => {
    execFile(file, args, { env, cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr: stderr + (error && code === -1 ? error.message : '') });
    });
  });
}

/** A result's stdout; a non-zero exit throws with the program's output. */
export async function ok(what: string, result: Result | Promise<Result>): Promise<string> {
  const { code, stdout, stderr } = await result;
  if (code !== 0) throw new Error(`${what} exited ${code}:\n${stdout}\n${stderr}`);
  return stdout;
}

export const check = (file: string, args: string[], options?: Parameters<typeof run>[2]) =>
  ok(`${file} ${args.join(' ')}`, run(file, args, options));

export const docker = (args: string[], timeoutMs?: number) => check(DOCKER, args, { timeoutMs });

/** A container's log, both streams. */
export async function containerLogs(id: string): Promise<string> {
  const { stdout, stderr } = await run(DOCKER, ['logs', id]);
  return `${stdout}\n${stderr}`;
}

/** The JSON lines (a command's log) among a program's output. */
export const jsonLines = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * A compose project of its own (unique name, free host port) with only what an operator would have in the environment,
 * the base images pointing at the stand-ins and BACKUP_DIR a directory of its own (not the checkout's).
 */
export class ComposeProject {
  private constructor(
    readonly name: string,
    readonly port: number,
    readonly env: NodeJS.ProcessEnv,
    private readonly files: string[],
    private readonly shims: string,
    /** The `backup` service's directory on the host (BACKUP_DIR). */
    readonly backupDir: string,
  ) {}

  static async create(label: string, files: string[] = []): Promise<ComposeProject> {
    const name = `animal-store-${label}-${randomBytes(3).toString('hex')}`;
    const port = await freePort();
    // `docker compose` (v2) as written in the docs, run by Debian's docker-compose (v1).
    const shims = await mkdtemp(join(tmpdir(), 'animal-store-docker-'));
    const shim = `#!/bin/sh\nif [ "$1" = compose ]; then shift; exec docker-compose "$@"; fi\nexec ${DOCKER} "$@"\n`;
    await writeFile(join(shims, 'docker'), shim, { mode: 0o755 });
    const backupDir = join(shims, 'backups');
    await mkdir(backupDir);
    const env: NodeJS.ProcessEnv = {
      PATH: `${shims}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? tmpdir(),
      COMPOSE_PROJECT_NAME: name,
      PORT: String(port),
      BACKUP_DIR: backupDir,
      ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
      ...Object.fromEntries(BASE_IMAGE_VARIABLES.map((name) => [name, process.env[name]])),
    };
    return new ComposeProject(name, port, env, files, shims, backupDir);
  }

  /** The same project (name, port, environment) through other compose files. */
  withFiles(files: string[]): ComposeProject {
    return new ComposeProject(this.name, this.port, this.env, files, this.shims, this.backupDir);
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A request through the published port with `key`: a POST of `body` as JSON, or a GET. */
  request(key: string, path: string, options: { body?: object; headers?: object; signal?: AbortSignal } = {}) {
    const { body, signal } = options;
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...options.headers };
    return fetch(this.origin + path, { method: body ? 'POST' : 'GET', headers, body: JSON.stringify(body), signal });
  }

  async status(key: string, path = '/v1/pets?limit=1'): Promise<number> {
    const response = await this.request(key, path);
    await response.arrayBuffer();
    return response.status;
  }

  async createPet(key: string, name: string, fields: Partial<Pet> = {}): Promise<Pet> {
    const response = await this.request(key, '/v1/pets', { body: { name, categoryId: 1, ...fields } });
    if (response.status !== 201) throw new Error(`POST /v1/pets: ${response.status} ${await response.text()}`);
    return (await response.json()) as Pet;
  }

  /** Every animal, page after page through the `Link: rel="next"` header, as the README reads them. */
  async allPets(key: string): Promise<Pet[]> {
    const pets: Pet[] = [];
    for (let next: string | undefined = '/v1/pets?limit=100'; next;) {
      const response = await this.request(key, next);
      if (response.status !== 200) throw new Error(`GET ${next}: ${response.status} ${await response.text()}`);
      pets.push(...((await response.json()) as Pet[]));
      next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    }
    return pets;
  }

  compose(args: string[], timeoutMs = 180_000, extraEnv: NodeJS.ProcessEnv = {}): Promise<Result> {
    const files = this.files.flatMap((file) => ['-f', file]);
    return run('docker-compose', [...files, ...args], { env: { ...this.env, ...extraEnv }, timeoutMs });
  }

  composeOk(args: string[], timeoutMs?: number): Promise<string> {
    return ok(`docker-compose ${args.join(' ')}`, this.compose(args, timeoutMs));
  }

  /**
   * `command` in a one-off `service` container on the running stack: `--no-deps`, since Compose v1's `run` would first
   * start the one-shots `secrets` and `roles` again (and `migrate`, which could apply what a test left pending).
   */
  oneShot(service: string, command: string[], timeoutMs?: number): Promise<string> {
    return this.composeOk(['run', '--rm', '--no-deps', '-T', service, ...command], timeoutMs);
  }

  /** A new API key from the key CLI (as the owner in `migrate`, unless told). */
  async createKey(name: string, service = 'migrate'): Promise<string> {
    const printed = await this.oneShot(service, ['npm', 'run', '-s', 'apikey', '--', 'create', name]);
    return printed.trim().split('\n').at(-1)!;
  }

  /** A shell command line run as an operator would, in the project's directory and environment. */
  shell(command: string, extraEnv: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): Promise<Result> {
    return run('bash', ['-c', command], { env: { ...this.env, ...extraEnv }, timeoutMs });
  }

  shellOk(command: string, extraEnv?: NodeJS.ProcessEnv, timeoutMs?: number): Promise<string> {
    return ok(command, this.shell(command, extraEnv, timeoutMs));
  }

  /** `up -d`, then the api healthy. */
  async up(extraEnv: NodeJS.ProcessEnv = {}, healthyWithinMs = 120_000): Promise<void> {
    await ok('docker-compose up -d', this.compose(['up', '-d'], 300_000, extraEnv));
    await this.waitForHealth('api', 'healthy', healthyWithinMs);
  }

  /**
   * The ids of a service's containers, running or not, without `run`'s one-offs, read from the labels Compose sets:
   * through the engine's client, far cheaper than docker-compose's (Python) start-up at each check of a wait.
   */
  async containers(service: string): Promise<string[]> {
    const filters = this.labels(service).flatMap((label) => ['--filter', `label=${label}`]);
    const listed = await docker(['ps', '-a', '--no-trunc', '--format', '{{.Names}} {{.ID}}', ...filters]);
    return listed
      .split('\n')
      .filter(Boolean)
      .sort()
      .map((line) => line.split(' ')[1]);
  }

  private labels(service: string): string[] {
    return [`project=${this.name}`, `service=${service}`, 'oneoff=False'].map((label) => `com.docker.compose.${label}`);
  }

  async container(service: string): Promise<string> {
    const [id] = await this.containers(service);
    if (!id) throw new Error(`${this.name}: no ${service} container`);
    return id;
  }

  waitForHealth(service: string, status: string, timeoutMs: number): Promise<void> {
    const labels = this.labels(service).map((label) => `label=${label}`);
    return waitForHealth(labels, () => this.containers(service), status, timeoutMs, `${this.name} ${service}`);
  }

  /** A command in the service's running container, as `docker-compose exec -T` runs it, without its start-up. */
  async exec(service: string, args: string[], timeoutMs?: number): Promise<Result> {
    return run(DOCKER, ['exec', await this.container(service), ...args], { timeoutMs });
  }

  async execOk(service: string, args: string[], timeoutMs?: number): Promise<string> {
    return ok(`${service}: ${args.join(' ')}`, this.exec(service, args, timeoutMs));
  }

  /** The environment of the service's main process, one variable a line. */
  environment(service: string): Promise<string> {
    return this.execOk(service, ['sh', '-c', 'tr "\\0" "\\n" < /proc/1/environ']);
  }

  /**
   * Where any of `values` is in the service's container, as an attacker running there could look: the files holding
   * one, then how many variables of the processes it can see do ('0' alone: nowhere).
   */
  async whereFound(service: string, values: string[]): Promise<string> {
    const patterns = values.map((_, index) => `-e "$${index}"`).join(' ');
    const search =
      `grep -rlsF ${patterns} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev; ` +
      `cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n" | grep -cF ${patterns}`;
    return (await this.exec(service, ['sh', '-c', search, ...values])).stdout.trim();
  }

  /** psql in the database's container (`db` unless told) as `user`, stopping at the first error. */
  psql(statement: string, user = 'animal_store', service = 'db', timeoutMs?: number): Promise<Result> {
    const args = ['psql', '-U', user, '-d', 'animal_store', '-v', 'ON_ERROR_STOP=1', '-tAc', statement];
    return this.exec(service, args, timeoutMs);
  }

  /** A query's rows (as the superuser unless told); an error throws. */
  async sql(query: string, user?: string, service?: string): Promise<string> {
    return (await ok(query, this.psql(query, user, service))).trim();
  }

  /** Everything down, volumes included. */
  async down(): Promise<void> {
    await this.compose(['down', '-v', '--remove-orphans', '-t', '5'], 120_000);
    await rm(this.shims, { recursive: true, force: true });
  }

  async logs(service: string): Promise<string> {
    return (await this.compose(['logs', '--no-color', '--tail', '40', service])).stdout;
  }
}

/**
 * Waits until every container `ids` lists reports `status` (healthy, unhealthy): checked now, then again at each
 * health change the engine reports among the containers `filters` select (`docker events`), and at least every 5 s,
 * rather than polling `docker inspect` (docs/testing.md, "The Docker suite").
 */
export async function waitForHealth(
  filters: string[],
  ids: () => Promise<string[]>,
  status: string,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // From now on: a change made between this line and the first check is replayed, not missed.
  const args = ['events', '--since', String(Date.now() / 1000), '--filter', 'event=health_status'];
  const events = spawn(DOCKER, [...args, ...filters.flatMap((filter) => ['--filter', filter])], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  // Without the stream (the client failed to start) the checks every 5 s remain.
  events.on('error', () => {});
  let changes = 0;
  let wake = () => {};
  events.stdout.on('data', () => {
    changes += 1;
    wake();
  });
  let states: ContainerState[] = [];
  let listed: string[] = [];
  let lastError: unknown;
  try {
    while (Date.now() < deadline) {
      const seen = changes;
      try {
        listed = await ids();
        states = await Promise.all(listed.map(inspect));
        if (states.length > 0 && states.every((state) => state.Health?.Status === status)) return;
      } catch (error) {
        lastError = error;
      }
      if (changes === seen) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(5_000, Math.max(0, deadline - Date.now()))).unref();
        });
      }
    }
  } finally {
    events.kill();
  }
  // What the checks said, and the containers' last lines: the reason a bound was missed.
  const checks = states.flatMap((state) => state.Health?.Log ?? []).map((check) => check.Output.trim());
  const logs = await Promise.all(listed.map((id) => run(DOCKER, ['logs', '--tail', '20', id])));
  throw new Error(
    `Timed out after ${timeoutMs} ms waiting for ${what} to be ${status}` +
      (lastError instanceof Error ? `: ${lastError.message}` : '') +
      `\nlast checks: ${checks.join(' | ')}\nlogs:\n${logs.map((log) => log.stdout + log.stderr).join('\n')}`,
  );
}

export async function inspect(id: string): Promise<ContainerState> {
  const [info] = JSON.parse(await docker(['inspect', id])) as [{ State: ContainerState }];
  return info.State;
}

export type ContainerState = { Running: boolean; ExitCode: number; StartedAt: string; FinishedAt: string } & {
  Health?: { Status: string; Log?: { Output: string }[] };
};
