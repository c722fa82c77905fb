import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFile(`${ROOT}/${file}`, 'utf8');

interface Service {
  build?: unknown;
  image?: string;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: unknown[];
  volumes?: unknown[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  restart?: string;
}

/**
 * No Docker engine runs here, so the compose file is checked by docker-compose
 * itself (`config -q`, in test/system/) and its wiring is asserted on the parsed
 * YAML; the Dockerfile is checked for what the image must do.
 */
describe('docker-compose.yml', () => {
  let services: Record<string, Service>;
  let volumes: Record<string, unknown>;

  beforeAll(async () => {
    ({ services, volumes } = parse(await read('docker-compose.yml')) as {
      services: typeof services;
      volumes: typeof volumes;
    });
  });

  it('runs db, then the migrations once, then the API', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'db', 'migrate']);

    const { db, migrate, api } = services;
    expect(db.image).toBe('postgres:18');
    expect(db.volumes).toEqual(['db-data:/var/lib/postgresql']);
    expect(volumes).toHaveProperty('db-data');
    expect(db.healthcheck?.test.join(' ')).toMatch(/pg_isready/);

    expect(migrate.build).toBe('.');
    expect(migrate.command).toEqual(['npm', 'run', 'migration:run']);
    expect(migrate.depends_on).toEqual({ db: { condition: 'service_healthy' } });
    expect(migrate.restart).toBe('no');

    expect(api.image).toBe(migrate.image);
    expect(api.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });
    expect(api.ports).toEqual(['3000:3000']);
    expect(api.restart).toBe('unless-stopped');
    expect(api.healthcheck?.test.join(' ')).toContain('/health/ready');
    expect(api.environment).toMatchObject({ HOST: '0.0.0.0', PORT: 3000, MIGRATIONS_RUN: 'false' });
    for (const service of [migrate, api]) {
      expect(service.environment?.DATABASE_URL).toBe(
        'postgres://animal_store:${POSTGRES_PASSWORD:-example-password}@db:5432/animal_store',
      );
    }
  });

  it('holds no secret but the example database password', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [variable, value] of Object.entries(service.environment ?? {})) {
        const text = String(value);
        if (/PASSWORD|SECRET|TOKEN|KEYS?$/.test(variable)) {
          // Either taken from the operator's environment, or an obvious example.
          expect({ name, variable, ok: /^\$\{[A-Z_]+:-(example-[a-z-]*)?\}$/.test(text) }).toEqual({
            name,
            variable,
            ok: true,
          });
        }
        const password = /^postgres:\/\/[^:]+:([^@]+)@/.exec(text)?.[1];
        if (password !== undefined) expect(password).toBe('${POSTGRES_PASSWORD:-example-password}');
      }
    }
  });
});

describe('docker-compose.fleet.yml', () => {
  let services: Record<string, Service & { extends?: { file: string; service: string }; networks?: unknown }>;
  let haproxy: string;
  beforeAll(async () => {
    ({ services } = parse(await read('docker-compose.fleet.yml')) as { services: typeof services });
    haproxy = await read('compose/haproxy.cfg');
  });

  it('runs the replicas behind HAProxy, which health-checks readiness and retries only safe requests', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'db', 'lb', 'migrate', 'redis']);
    const { api, lb, migrate } = services;
    expect(services.db.extends).toEqual({ file: 'docker-compose.yml', service: 'db' });
    expect(migrate.command).toEqual(['npm', 'run', 'migration:run']);
    expect(api.ports).toBeUndefined();
    expect(lb.ports).toEqual(['3000:80']);
    expect(api.environment).toMatchObject({ MIGRATIONS_RUN: 'false', REDIS_URL: 'redis://redis:6379', PORT: 3000 });
    expect(haproxy).toMatch(/^\s*option httpchk GET \/health\/ready$/m);
    expect(haproxy).toMatch(new RegExp(`server-template api \\d+ api:${api.environment!.PORT} check`));
    expect(haproxy).toMatch(/disable-l7-retry if !METH_GET !METH_HEAD !\{ req.hdr\(idempotency-key\) -m found \}/);
  });

  it('drains longer than HAProxy takes to mark a replica down, and stops only after the drain and grace period', () => {
    const { api, lb } = services;
    const [, inter, fall] = /default-server inter (\d+)s fall (\d+)/.exec(haproxy)!.map(Number);
    expect(Number(api.environment!.SHUTDOWN_DRAIN_DELAY_MS)).toBeGreaterThanOrEqual(inter * fall * 1000);
    const stopGraceMs = Number(/^(\d+)s$/.exec((api as { stop_grace_period?: string }).stop_grace_period!)![1]) * 1000;
    expect(stopGraceMs).toBeGreaterThan(
      Number(api.environment!.SHUTDOWN_DRAIN_DELAY_MS) + Number(api.environment!.SHUTDOWN_GRACE_MS),
    );
    // Only the balancer's forwarded address is believed.
    const lbAddress = (lb.networks as { fleet: { ipv4_address: string } }).fleet.ipv4_address;
    expect(api.environment!.TRUST_PROXY).toBe(lbAddress);
  });
});

describe('Dockerfile', () => {
  let dockerfile: string;
  beforeAll(async () => {
    dockerfile = await read('Dockerfile');
  });

  it('builds with dev dependencies and runs with production ones only, on Node 24 (LTS) slim', () => {
    const stages = dockerfile.match(/^FROM .+$/gm) ?? [];
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage).toMatch(/^FROM node:24-slim\b/);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).toMatch(/^RUN npm run build$/m);
  });

  it('runs node dist/src/main.js in production as a non-root user, with a readiness health check', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^ENV NODE_ENV=production/m);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^CMD \["node", "dist\/src\/main.js"\]$/m);
    expect(runtime).toMatch(/^HEALTHCHECK [\s\S]*\/health\/ready/m);
  });

  it('keeps local state and secrets out of the build context', async () => {
    const ignored = (await read('.dockerignore')).split('\n');
    for (const entry of ['.env', '.data', 'node_modules', 'dist', '.git']) expect(ignored).toContain(entry);
  });
});
