import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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
export const BASE_IMAGE_VARIABLES = ['NODE_IMAGE', 'POSTGRES_IMAGE', 'HAPROXY_IMAGE', 'REDIS_IMAGE'] as const;

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

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

/** Like run(), but a non-zero exit throws with the program's output. */
export async function check(file: string, args: string[], options?: Parameters<typeof run>[2]): Promise<string> {
  const result = await run(file, args, options);
  if (result.code !== 0) {
    throw new Error(`${file} ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

export const docker = (args: string[], timeoutMs?: number) => check(DOCKER, args, { timeoutMs });

/**
 * A compose project of its own (unique name, free host port) with only what an operator would have in the
 * environment: PATH, HOME, the engine's address, PORT, the base images pointing at the stand-ins, and BACKUP_DIR
 * (a directory of its own, so that no run writes backups into the checkout).
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
    await writeFile(
      join(shims, 'docker'),
      `#!/bin/sh\nif [ "$1" = compose ]; then shift; exec docker-compose "$@"; fi\nexec ${DOCKER} "$@"\n`,
    );
    await chmod(join(shims, 'docker'), 0o755);
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

  /** The same project (name, port, environment) driven through other compose files: an override on top, say. */
  withFiles(files: string[]): ComposeProject {
    return new ComposeProject(this.name, this.port, this.env, files, this.shims, this.backupDir);
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** docker-compose with this project's files and environment. */
  compose(args: string[], timeoutMs = 180_000): Promise<Result> {
    return run('docker-compose', [...this.files.flatMap((file) => ['-f', file]), ...args], {
      env: this.env,
      timeoutMs,
    });
  }

  async composeOk(args: string[], timeoutMs?: number): Promise<string> {
    const result = await this.compose(args, timeoutMs);
    if (result.code !== 0) throw new Error(`docker-compose ${args.join(' ')}: ${result.stdout}\n${result.stderr}`);
    return result.stdout;
  }

  /**
   * `command` in a one-off `service` container on the running stack: `--no-deps`, since Compose v1's `run` would first
   * start the one-shots `secrets` and `roles` again (and `migrate`, which could apply what a test left pending).
   */
  oneShot(service: string, command: string[], timeoutMs?: number): Promise<string> {
    return this.composeOk(['run', '--rm', '--no-deps', '-T', service, ...command], timeoutMs);
  }

  /** A shell command line run as an operator would, in the project's directory and environment. */
  shell(command: string, extraEnv: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): Promise<Result> {
    return run('bash', ['-c', command], { env: { ...this.env, ...extraEnv }, timeoutMs });
  }

  /**
   * The ids of a service's containers, running or not, as `docker-compose ps -a -q <service>` lists them (by name,
   * without `run`'s one-off containers), read from the labels Compose sets: the engine's client, which costs far less
   * CPU than docker-compose (Python) takes to start, and a wait for health calls this at each check.
   */
  async containers(service: string): Promise<string[]> {
    const listed = await docker([
      'ps',
      '-a',
      '--no-trunc',
      '--format',
      '{{.Names}} {{.ID}}',
      ...this.labels(service).flatMap((label) => ['--filter', `label=${label}`]),
    ]);
    return listed
      .split('\n')
      .filter(Boolean)
      .sort()
      .map((line) => line.split(' ')[1]);
  }

  /** The labels Compose sets on a service's own containers (not `run`'s one-offs). */
  private labels(service: string): string[] {
    return [`project=${this.name}`, `service=${service}`, 'oneoff=False'].map((label) => `com.docker.compose.${label}`);
  }

  async container(service: string): Promise<string> {
    const [id] = await this.containers(service);
    if (!id) throw new Error(`${this.name}: no ${service} container`);
    return id;
  }

  async healthOf(service: string): Promise<string | undefined> {
    return (await inspect(await this.container(service))).Health?.Status;
  }

  /** Waits until every container of the service reports `status` (healthy, unhealthy). */
  waitForHealth(service: string, status: string, timeoutMs: number): Promise<void> {
    const labels = this.labels(service).map((label) => `label=${label}`);
    return waitForHealth(labels, () => this.containers(service), status, timeoutMs, `${this.name} ${service}`);
  }

  /**
   * A command in the service's running container, as `docker-compose exec -T <service>` runs it (the container's user,
   * environment and working directory, no terminal), through the engine's client: without docker-compose's start-up.
   */
  async exec(service: string, args: string[], timeoutMs?: number): Promise<Result> {
    return run(DOCKER, ['exec', await this.container(service), ...args], { timeoutMs });
  }

  /** Like exec(), but a non-zero exit throws with the command's output; its stdout. */
  async execOk(service: string, args: string[], timeoutMs?: number): Promise<string> {
    return check(DOCKER, ['exec', await this.container(service), ...args], { timeoutMs });
  }

  /**
   * Runs SQL in the project's database (through the server container's own psql, as `docker-compose exec -T db` would,
   * without docker-compose's start-up), as the superuser unless told, on `db` unless told.
   */
  async sql(query: string, user = 'animal_store', service = 'db'): Promise<string> {
    const server = await this.container(service);
    return (await docker(['exec', server, 'psql', '-U', user, '-d', 'animal_store', '-tAc', query])).trim();
  }

  /** Everything down, volumes included; the project's output when asked for (on failure). */
  async down(): Promise<void> {
    await this.compose(['down', '-v', '--remove-orphans', '-t', '5'], 120_000);
    await rm(this.shims, { recursive: true, force: true });
  }

  async logs(service?: string): Promise<string> {
    const result = await this.compose(['logs', '--no-color', '--tail', '40', ...(service ? [service] : [])]);
    return result.stdout;
  }
}

/**
 * Waits until every container `ids` lists reports `status` (healthy, unhealthy): checked now, then again at each
 * health change the engine reports among the containers `filters` select (`docker events`), and at least every 5 s:
 * not polling `docker inspect`, whose cost docs/testing.md ("The Docker suite") measures.
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
  const events = spawn(
    DOCKER,
    [
      'events',
      '--since',
      String(Date.now() / 1000),
      '--format',
      '{{.Status}}',
      '--filter',
      'event=health_status',
    ].concat(filters.flatMap((filter) => ['--filter', filter])),
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
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
          const timer = setTimeout(resolve, Math.min(5_000, Math.max(0, deadline - Date.now())));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
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

/** `docker inspect` of a container. */
export async function inspect(id: string): Promise<ContainerState> {
  const [info] = JSON.parse(await docker(['inspect', id])) as [{ State: ContainerState }];
  return info.State;
}

export interface ContainerState {
  Status: string;
  Running: boolean;
  ExitCode: number;
  StartedAt: string;
  FinishedAt: string;
  Health?: { Status: string; Log?: { Start: string; End: string; ExitCode: number; Output: string }[] };
}
