import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFile(`${ROOT}/${file}`, 'utf8');
/** The service's command line, V8 flags included: `npm run start:prod` owns it, the image and compose repeat it. */
const { scripts } = JSON.parse(await read('package.json')) as { scripts: Record<string, string> };
const START_PROD = scripts['start:prod'].split(' ');

describe('the command that starts the service', () => {
  it('gives node the V8 flags on its command line, and `npm start` the same command', () => {
    expect(START_PROD).toEqual([
      'node',
      '--heap-growing-percent=50',
      '--no-allocation-site-pretenuring',
      '--import',
      './dist/src/observability/tracing/preload.js',
      'dist/src/main.js',
    ]);
    expect(scripts.start).toBe(
      `npm run build && ${scripts['start:prod'].replace('dist/src/main.js', 'dist/dev/start.js')}`,
    );
  });
});

interface Service {
  extends?: { file: string; service: string };
  image?: string;
  user?: string;
  read_only?: boolean;
  cap_drop?: string[];
  security_opt?: string[];
  tmpfs?: string[];
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: unknown[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  restart?: string;
  networks?: unknown;
  stop_grace_period?: string;
}

/** `own` on top of `base`, as compose merges them (maps merged, lists concatenated). */
const merge = (base: Service, own: Service): Service => ({
  ...base,
  ...own,
  environment: { ...base.environment, ...own.environment },
  volumes: [...(base.volumes ?? []), ...(own.volumes ?? [])],
});

/** A compose file's services with `extends` resolved, and the override files after it applied, as compose does. */
async function services(file: string, ...overrides: string[]): Promise<Record<string, Service>> {
  const { services: declared } = parse(await read(file)) as { services: Record<string, Service> };
  const resolved: Record<string, Service> = {};
  for (const [name, service] of Object.entries(declared)) {
    const { extends: parent, ...own } = service;
    resolved[name] = parent ? merge((await services(join(dirname(file), parent.file)))[parent.service], own) : service;
  }
  for (const override of overrides) {
    const { services: more } = parse(await read(override)) as { services: Record<string, Service> };
    for (const [name, service] of Object.entries(more)) resolved[name] = merge(resolved[name] ?? {}, service);
  }
  return resolved;
}

/** The volumes of secrets a service mounts. */
const secretVolumes = (service: Service) =>
  (service.volumes ?? []).map((volume) => volume.split(':')[0]).filter((name) => name.endsWith('secrets'));

/**
 * Checked on paper here (`npm test` needs no Docker): the wiring of the compose files and what the Dockerfile must
 * do. `npm run test:docker` runs them on a real engine (test/docker/).
 */
describe('docker-compose.yml', () => {
  let compose: Record<string, Service>;
  let volumes: Record<string, unknown>;

  beforeAll(async () => {
    compose = await services('docker-compose.yml');
    ({ volumes } = parse(await read('docker-compose.yml')) as { volumes: typeof volumes });
  });

  it('generates the secrets, then runs db, then the roles, then the migrations once, then the API', () => {
    expect(Object.keys(compose).sort()).toEqual(['api', 'backup', 'db', 'grants', 'migrate', 'roles', 'secrets']);

    const { secrets, db, migrate, api, roles, grants, backup } = compose;
    expect(db.image).toBe('${POSTGRES_IMAGE:-postgres:18}');
    expect(db.volumes).toEqual(['db-data:/var/lib/postgresql', 'secrets:/run/animal-store:ro']);
    expect(Object.keys(volumes).sort()).toEqual(['api-secrets', 'db-data', 'owner-secrets', 'secrets']);
    expect(db.depends_on).toEqual({ secrets: { condition: 'service_completed_successfully' } });

    for (const service of [secrets, migrate, api]) expect(service.image).toBe('animal-store:local');
    // The roles are made (or a volume from before them upgraded) on every `up`, as the superuser, before anything
    // else connects; the migrations run as the owner, the API as the service's role.
    expect(roles.image).toBe(db.image);
    expect(roles.depends_on).toEqual({ db: { condition: 'service_healthy' } });
    expect(migrate.depends_on).toEqual({ roles: { condition: 'service_completed_successfully' } });
    expect(migrate.environment).toMatchObject({ DATABASE_ROLE: 'owner' });
    expect(api.environment).toMatchObject({ DATABASE_ROLE: 'api' });
    for (const service of [secrets, roles, migrate]) expect(service.restart).toBe('no');
    // The same script again once the migrations have made the tables: the api's grants are per table.
    expect({ ...grants, depends_on: undefined }).toEqual({ ...roles, depends_on: undefined });
    expect(grants.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });

    // Backups on the database's own image, into a host directory that `down -v` cannot remove.
    expect(backup.image).toBe(db.image);
    expect(backup.volumes).toContain('${BACKUP_DIR:-./backups}:/backups');
    expect(backup.depends_on).toEqual({ roles: { condition: 'service_completed_successfully' } });
    expect(backup.environment).toMatchObject({ PGUSER: 'animal_store_owner' });

    expect(api.depends_on).toEqual({ grants: { condition: 'service_completed_successfully' } });
    expect(api.command).toEqual(START_PROD);
    expect(api.restart).toBe('unless-stopped');
    expect(api.environment).toMatchObject({ HOST: '0.0.0.0', PORT: 3000, MIGRATIONS_RUN: 'false' });
  });

  it('writes no secret: they are generated, one volume per reader, so each container mounts only its own', async () => {
    const { secrets, db, migrate, api, backup, roles } = compose;
    expect(secrets.volumes).toEqual([
      'secrets:/run/animal-store',
      'owner-secrets:/run/animal-store-owner',
      'api-secrets:/run/animal-store-api',
    ]);
    expect(db.environment?.POSTGRES_PASSWORD_FILE).toBe('/run/animal-store/postgres-password');
    expect(secretVolumes(db)).toEqual(['secrets']);
    expect(secretVolumes(roles)).toEqual(['secrets', 'owner-secrets', 'api-secrets']);
    expect(secretVolumes(migrate)).toEqual(['owner-secrets']);
    expect(secretVolumes(backup)).toEqual(['owner-secrets']);
    expect(secretVolumes(api)).toEqual(['api-secrets']);
    for (const service of [migrate, api]) {
      expect(service.volumes).toContain(`${secretVolumes(service)[0]}:/run/animal-store:ro`);
      expect(service.entrypoint?.join(' ')).toContain('DATABASE_URL=');
      // As k8s/deployment.yaml's securityContext.
      expect(service).toMatchObject({
        user: '1000:1000',
        read_only: true,
        cap_drop: ['ALL'],
        security_opt: ['no-new-privileges:true'],
        tmpfs: ['/tmp'],
      });
    }
    expect(roles.environment).toMatchObject({
      OWNER_PASSWORD_FILE: '/run/animal-store-owner/owner-password',
      API_PASSWORD_FILE: '/run/animal-store-api/api-password',
    });
    // Only from the operator's environment (empty by default), or a generated file.
    const written = Object.entries(compose).flatMap(([name, service]) =>
      Object.entries(service.environment ?? {})
        .filter(([variable]) => /PASSWORD|SECRET|TOKEN|KEYS?$/.test(variable))
        .filter(([, value]) => !/^\$\{[A-Z_]+:-\}$|^\/run\/animal-store(-\w+)?\//.test(String(value)))
        .map(([variable]) => `${name}.${variable}`),
    );
    expect(written).toEqual([]);
    for (const file of ['docker-compose', 'docker-compose.fleet', 'docker-compose.replica', 'compose/services']) {
      const examples = /example-|change-me/.test(await read(`${file}.yml`));
      expect({ file, examples }).toEqual({ file, examples: false });
    }
  });
});

describe('docker-compose.fleet.yml', () => {
  let fleet: Record<string, Service>;
  let single: Record<string, Service>;
  let haproxy: string;
  beforeAll(async () => {
    fleet = await services('docker-compose.fleet.yml');
    single = await services('docker-compose.yml');
    haproxy = await read('compose/haproxy.cfg');
  });

  it('runs the replicas behind HAProxy, which health-checks readiness and retries only safe requests', () => {
    expect(Object.keys(fleet).sort()).toEqual([...Object.keys(single), 'lb', 'redis'].sort());
    const { api, lb } = fleet;
    // The same database, secrets, image and backups as docker-compose.yml: every replica reads the same generated secrets.
    const unwired = (service: Service) => ({ ...service, networks: undefined, depends_on: undefined });
    for (const name of ['secrets', 'db', 'roles', 'grants', 'migrate', 'backup'] as const) {
      expect({ name, ...unwired(fleet[name]) }).toEqual({ name, ...unwired(single[name]) });
    }
    for (const key of ['entrypoint', 'volumes', 'user', 'read_only', 'cap_drop', 'security_opt', 'tmpfs'] as const)
      expect({ key, value: api[key] }).toEqual({ key, value: single.api[key] });
    expect(api.ports).toBeUndefined();
    expect(lb.image).toBe('${HAPROXY_IMAGE:-haproxy:2.6}');
    expect(api.environment).toMatchObject({ MIGRATIONS_RUN: 'false', REDIS_URL: 'redis://redis:6379', PORT: 3000 });
    expect(haproxy).toMatch(/^\s*option httpchk GET \/health\/ready$/m);
    expect(haproxy).toMatch(/disable-l7-retry if !METH_GET !METH_HEAD !\{ req.hdr\(idempotency-key\) -m found \}/);
  });

  it('stops a replica only after its drain and grace period', () => {
    const { api } = fleet;
    const stopGraceMs = Number(/^(\d+)s$/.exec(api.stop_grace_period!)![1]) * 1000;
    expect(stopGraceMs).toBeGreaterThan(
      Number(api.environment!.SHUTDOWN_DRAIN_DELAY_MS) + Number(api.environment!.SHUTDOWN_GRACE_MS),
    );
  });
});

describe('docker-compose.replica.yml, on top of the fleet', () => {
  let fleet: Record<string, Service>;
  let withReplica: Record<string, Service>;
  beforeAll(async () => {
    fleet = await services('docker-compose.fleet.yml');
    withReplica = await services('docker-compose.fleet.yml', 'docker-compose.replica.yml');
  });

  it('adds a streaming replica that the api instances read from, and nothing to the fleet without it; only the replica and the roles steps mount its password', () => {
    expect(Object.keys(withReplica).sort()).toEqual([...Object.keys(fleet), 'postgres-replica'].sort());
    const { api, db, 'postgres-replica': replica } = withReplica;
    expect(fleet.api.environment).not.toHaveProperty('DATABASE_REPLICA_HOST');
    expect(fleet.db.command).toBeUndefined();
    // Not a dependency: an instance reads from the primary while the replica is away.
    expect(api.depends_on).toEqual(fleet.api.depends_on);
    // The same server and client authentication as the primary it copies.
    expect(replica).toMatchObject({ image: db.image, command: db.command, networks: db.networks });
    expect(replica.depends_on).toEqual({ roles: { condition: 'service_completed_successfully' } });

    // The replication password, in the replica and the roles steps only.
    const added: Record<string, string[]> = {
      secrets: ['replication-secrets'],
      roles: ['replication-secrets'],
      grants: ['replication-secrets'],
    };
    for (const [name, service] of Object.entries(withReplica)) {
      const expected =
        name === 'postgres-replica' ? ['replication-secrets'] : [...secretVolumes(fleet[name]), ...(added[name] ?? [])];
      expect({ name, volumes: secretVolumes(service) }).toEqual({ name, volumes: expected });
    }
    expect(withReplica.roles.environment?.REPLICATION_PASSWORD_FILE).toMatch(/^\/run\/animal-store-replication\//);
  });
});

describe('Dockerfile', () => {
  let dockerfile: string;
  beforeAll(async () => {
    dockerfile = await read('Dockerfile');
  });

  it('builds with dev dependencies and runs with production ones only, on Node 24 (LTS) slim by default, trusting a CA bundle for npm only when given one (an optional build secret)', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
    const stages = dockerfile.match(/^FROM .+$/gm) ?? [];
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage).toMatch(/^FROM (\$\{NODE_IMAGE\}|dependencies)( |$)/);
    const installs = dockerfile.match(/^RUN [^\n]*(\\\n[^\n]*)*npm ci\b.*$/gm) ?? [];
    expect(installs).toHaveLength(2);
    for (const install of installs) expect(install).toContain('--mount=type=secret,id=npm-ca,required=false');
  });

  it('runs node dist/src/main.js in production as a non-root user, with a readiness health check, and keeps local state and secrets out of the build context', async () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^ENV NODE_ENV=production/m);
    expect(runtime).toMatch(/^USER node$/m);
    expect(JSON.parse(/^CMD (.+)$/m.exec(runtime)?.[1] ?? 'null')).toEqual(START_PROD);
    expect(runtime).toMatch(/^HEALTHCHECK [\s\S]*\/health\/ready/m);
    const ignored = (await read('.dockerignore')).split('\n');
    for (const entry of ['.env', '.data', 'node_modules', 'dist', '.git']) expect(ignored).toContain(entry);
  });
});
