import { expect } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ConfigMap, PersistentVolumeClaim, Secret, Service, type IPodTemplateSpec } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { CronJob, Job } from 'kubernetes-models/batch/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { parseAllDocuments } from 'yaml';
import { OPERATIONS_ROUTES } from '../src/observability/operations-routes.js';
import { loadConfig } from '../src/config/app-config.js';
import { ROOT } from './support/built-service.js';

/**
 * k8s/ validated against the Kubernetes API schemas (kubernetes-models, generated from the Kubernetes OpenAPI document)
 * and checked against the service's real settings. No cluster is needed.
 */
type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
} & Record<string, any>;

/** The schema of each kind shipped; each also checks the manifest's apiVersion. */
const MODELS = {
  ConfigMap,
  Secret,
  Service,
  Deployment,
  Job,
  CronJob,
  PersistentVolumeClaim,
  HorizontalPodAutoscaler,
  PodDisruptionBudget,
};
type Kinds = { [K in keyof typeof MODELS]: InstanceType<(typeof MODELS)[K]> };

const DIRECTORY = join(ROOT, 'k8s');
const files = readdirSync(DIRECTORY)
  .filter((file) => file.endsWith('.yaml'))
  .sort();
const manifests: { file: string; manifest: Manifest }[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DIRECTORY, file), 'utf8')).map((document) => {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.map((e) => e.message).join('; ')}`);
    return { file, manifest: document.toJS() as Manifest };
  }),
);
/** The one manifest of a kind (of that name, for a kind shipped more than once). */
const only = <K extends keyof Kinds>(kind: K, name?: string): Kinds[K] => {
  const found = manifests.filter(
    ({ manifest }) => manifest.kind === kind && (name === undefined || manifest.metadata.name === name),
  );
  expect(found).toHaveLength(1);
  return found[0].manifest as Kinds[K];
};
const podOf = (workload: { spec?: { template: IPodTemplateSpec } }) => workload.spec!.template.spec!;

describe('Kubernetes manifests (k8s/)', () => {
  it('are all known kinds and valid against the Kubernetes schemas', () => {
    const invalid = manifests.flatMap(({ file, manifest }) => {
      const Model = (MODELS as Record<string, new (data: any) => { validate(): void }>)[manifest.kind];
      try {
        if (!Model) throw new Error('no schema here');
        new Model(manifest).validate();
        return [];
      } catch (error) {
        return [`${file}: ${manifest.apiVersion} ${manifest.kind} ${manifest.metadata.name}: ${String(error)}`];
      }
    });
    expect(invalid).toEqual([]);
    const kinds = manifests.map(({ manifest }) => manifest.kind).sort();
    expect(kinds.join(' ')).toBe(
      'ConfigMap ConfigMap CronJob Deployment HorizontalPodAutoscaler Job Job PersistentVolumeClaim PodDisruptionBudget Secret Secret Service',
    );
  });

  const deployment = () => only('Deployment');
  const config = () => only('ConfigMap', 'animal-store-config').data!;
  const secret = () => only('Secret', 'animal-store-secrets').stringData!;
  const ownerSecret = () => only('Secret', 'animal-store-owner');
  const migrateJob = () => only('Job', 'animal-store-migrate');
  /** The Secret as an operator creates it: the shipped placeholders replaced by values of their own. */
  const ownSecret = () => ({
    ...secret(),
    CURSOR_SECRET: 'an-operators-own-cursor-secret-0123456789',
    METRICS_TOKEN: 'an-operators-own-metrics-token-0123456789',
  });
  const api = () => podOf(deployment()).containers[0];
  const settings = () => loadConfig({ ...config(), ...ownSecret() });
  const expectUnprivileged = (container: { securityContext?: unknown }) =>
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });

  it('configure only variables the service documents, with values its configuration accepts', () => {
    const documented = readFileSync(join(ROOT, '.env.example'), 'utf8');
    const names = [...Object.keys(config()), ...Object.keys(secret())];
    expect(names.filter((name) => !new RegExp(`^#? ?${name}=`, 'm').test(documented))).toEqual([]);
    expect(settings()).toMatchObject({ production: true, migrationsRun: false, redisUrl: expect.any(String) });
    expect(settings().trustProxy.length).toBeGreaterThan(0);
  });

  it('ship secret placeholders that production refuses, so that none of them can be deployed as it is', () => {
    for (const name of ['CURSOR_SECRET', 'METRICS_TOKEN']) {
      const shipped = { ...config(), ...ownSecret(), [name]: secret()[name] };
      expect(() => loadConfig(shipped)).toThrow(new RegExp(`^${name} is an example value`));
    }
  });

  it('trust X-Forwarded-For from a few addresses only, never a whole network', () => {
    // Every pod of a trusted range could forge its clients' addresses; proxy-addr's names are whole ranges too.
    const wide = settings().trustProxy.filter((entry) => {
      const [address, bits = '128'] = entry.split('/');
      const version = isIP(address);
      return version === 0 || Number(bits) < (version === 4 ? 24 : 120);
    });
    expect(wide).toEqual([]);
  });

  it('agree with the service: port, probe paths, drain delay and grace period', () => {
    const { port, shutdownDrainDelayMs, shutdownGraceMs } = settings();
    expect(api().ports!.find((p) => p.name === 'http')!.containerPort).toBe(port);
    expect(OPERATIONS_ROUTES).toMatchObject({ live: 'health/live', ready: 'health/ready' });
    expect(api().livenessProbe!.httpGet).toEqual({ path: '/health/live', port: 'http' });
    expect(api().readinessProbe!.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    // The drain outlasts the readiness probe's detection (period x failures) ...
    const { periodSeconds, failureThreshold } = api().readinessProbe!;
    expect(shutdownDrainDelayMs).toBeGreaterThanOrEqual(periodSeconds! * failureThreshold! * 1000);
    // ... and the kubelet's SIGKILL comes only after the drain and the grace period.
    expect(podOf(deployment()).terminationGracePeriodSeconds! * 1000).toBeGreaterThan(
      shutdownDrainDelayMs + shutdownGraceMs,
    );
    expect(api().envFrom).toEqual([
      { configMapRef: { name: only('ConfigMap', 'animal-store-config').metadata!.name } },
      { secretRef: { name: 'animal-store-secrets' } },
    ]);
    expect(api().resources!.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(api().resources!.limits).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
  });

  it('run as the image user, not root, without privileges', () => {
    // The image's user, node (docker-compose.e2e-spec.ts reads it in the Dockerfile), is uid 1000.
    for (const workload of [deployment(), migrateJob()]) {
      const pod = podOf(workload);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      pod.containers.forEach(expectUnprivileged);
    }
  });

  it('point the Service, the budget and the autoscaler at the Deployment', () => {
    const labels = deployment().spec!.template.metadata!.labels;
    expect(deployment().spec!.selector.matchLabels).toEqual(labels);
    expect(only('Service').spec!.selector).toEqual(labels);
    expect(only('Service').spec!.ports![0].targetPort).toBe('http');
    expect(only('PodDisruptionBudget').spec!.selector!.matchLabels).toEqual(labels);
    const hpa = only('HorizontalPodAutoscaler').spec;
    expect(hpa.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment().metadata!.name,
    });
    expect(hpa.metrics).toEqual([
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } },
      },
    ]);
    expect(hpa.minReplicas).toBeGreaterThanOrEqual(2);
  });

  it('migrate with the same command as `npm run migration:run`, in the same image and configuration', () => {
    const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const job = podOf(migrateJob()).containers[0];
    // As the image's script runs it: the production entry of the same name (dev/ is not in the image; Dockerfile).
    const inImage = packageJson.scripts['migration:run'].replace('dist/dev/', 'dist/src/cli/');
    expect(job.command).toEqual(inImage.split(' '));
    expect(job.image).toBe(api().image);
    expect(job.envFrom).toEqual([api().envFrom![0], { secretRef: { name: ownerSecret().metadata!.name } }]);
  });

  describe('a database role per workload (compose/roles.sh makes them)', () => {
    const rolesScript = readFileSync(join(ROOT, 'compose/roles.sh'), 'utf8');
    const userOf = (url: string) => new URL(url).username;
    const backupContainer = () => only('CronJob').spec.jobTemplate.spec!.template.spec!.containers[0];

    it("the Deployment connects as the service's role and reads no owner's URL; it cannot run migrations", () => {
      expect(userOf(secret().DATABASE_URL)).toBe('animal_store_api');
      expect(rolesScript).toContain(`('${userOf(secret().DATABASE_URL)}')`);
      const sources = [...(api().envFrom ?? []), ...(api().env ?? [])].map((source) =>
        JSON.stringify(source).includes(ownerSecret().metadata!.name!),
      );
      expect(sources).not.toContain(true);
      expect(api().env ?? []).toEqual([]);
      expect(api().command).toBeUndefined();
    });

    it('the migrate Job and the backup CronJob connect as the owner, directly, not through PgBouncer', () => {
      const owner = ownerSecret().stringData!.DATABASE_URL;
      expect(userOf(owner)).toBe('animal_store_owner');
      expect(rolesScript).toContain(`('${userOf(owner)}')`);
      expect(new URL(owner).port).not.toBe(new URL(secret().DATABASE_URL).port);
      expect(backupContainer().env).toEqual([
        {
          name: 'DATABASE_URL',
          valueFrom: { secretKeyRef: { name: ownerSecret().metadata!.name, key: 'DATABASE_URL' } },
        },
      ]);
      // The Job reads the owner's Secret, not the service's (whose DATABASE_URL would otherwise compete).
      expect(podOf(migrateJob()).containers[0].envFrom).not.toContainEqual({
        secretRef: { name: 'animal-store-secrets' },
      });
    });

    it('the roles Job runs compose/roles.sh itself, from a ConfigMap made of that file, with no copy in k8s/', () => {
      const job = only('Job', 'animal-store-roles');
      const pod = podOf(job);
      const [container] = pod.containers;
      const scriptVolume = pod.volumes!.find((volume) => volume.configMap)!;
      const scriptMount = container.volumeMounts!.find((mount) => mount.name === scriptVolume.name)!;
      expect(container.command).toEqual(['bash', `${scriptMount.mountPath}/roles.sh`]);
      const jobText = readFileSync(join(DIRECTORY, 'roles-job.yaml'), 'utf8');
      expect(jobText).toContain(
        `kubectl create configmap ${scriptVolume.configMap!.name} --from-file=roles.sh=compose/roles.sh`,
      );
      expect(manifests.map(({ manifest }) => manifest.metadata.name)).not.toContain(scriptVolume.configMap!.name);
      expect(files.filter((file) => /CREATE ROLE/.test(readFileSync(join(DIRECTORY, file), 'utf8')))).toEqual([]);
      // The passwords where the script reads them, and the image the backups use.
      const secretsDirectory = /^SECRETS=\$\{SECRETS_DIR:-(\S+)\}$/m.exec(rolesScript)![1];
      const passwords = pod.volumes!.find((volume) => volume.secret)!;
      expect(container.volumeMounts!.find((mount) => mount.name === passwords.name)!.mountPath).toBe(secretsDirectory);
      const passwordFile = container.env!.find((variable) => variable.name === 'POSTGRES_PASSWORD_FILE')!.value!;
      expect(passwordFile.startsWith(`${secretsDirectory}/`)).toBe(true);
      expect(container.image).toBe(backupContainer().image);
      expect(container.env!.find((variable) => variable.name === 'PGHOST')!.value).toBe(
        new URL(ownerSecret().stringData!.DATABASE_URL).hostname,
      );
    });
  });

  it("back up with the compose files' script, on a schedule, into the claim, keeping what they keep", () => {
    const cronJob = only('CronJob');
    const pod = cronJob.spec.jobTemplate.spec!.template.spec!;
    const [container] = pod.containers;
    const script = only('ConfigMap', 'animal-store-backup-script');
    // The same file, byte for byte: the k8s copy cannot drift from compose/backup.sh.
    expect(script.data!['backup.sh']).toBe(readFileSync(join(ROOT, 'compose/backup.sh'), 'utf8'));
    const scriptVolume = pod.volumes!.find((volume) => volume.configMap?.name === script.metadata!.name)!;
    const scriptMount = container.volumeMounts!.find((mount) => mount.name === scriptVolume.name)!;
    expect(container.command).toEqual(['bash', `${scriptMount.mountPath}/backup.sh`]);
    expect(container.args).toEqual(['now']);
    // The script's own defaults: the backup directory, and the retention (BACKUP_KEEP) left unset.
    const claim = only('PersistentVolumeClaim');
    const claimVolume = pod.volumes!.find((volume) => volume.persistentVolumeClaim)!;
    expect(claimVolume.persistentVolumeClaim!.claimName).toBe(claim.metadata!.name);
    expect(container.volumeMounts!.find((mount) => mount.name === claimVolume.name)!.mountPath).toBe('/backups');
    expect(cronJob.spec.concurrencyPolicy).toBe('Forbid');
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    expectUnprivileged(container);
    // The same PostgreSQL image as the compose files' `db` and `backup`.
    const services = readFileSync(join(ROOT, 'compose/services.yml'), 'utf8');
    expect(services).toContain(`image: \${POSTGRES_IMAGE:-${container.image}}`);
  });
});
