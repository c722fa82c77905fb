import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// Loaded outside Jest's module system: Node's modules only.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';

/**
 * `npm run test:docker`'s global setup: the engine must answer; the stand-in base images are built (cached), then
 * the service image from the project's Dockerfile on them, as `animal-store:local`, which both compose files run.
 */
export default async function globalSetup(): Promise<void> {
  try {
    execFileSync(DOCKER, ['version', '--format', '{{.Server.Version}}'], { stdio: 'pipe', timeout: 10_000 });
  } catch {
    process.stderr.write(
      `No Docker engine answers ${process.env.DOCKER_HOST ?? 'on /var/run/docker.sock'}: start dockerd (as root), ` +
        'or set DOCKER_HOST to the socket of a running one.\n',
    );
    process.exit(1);
  }
  const started = Date.now();
  const exec = promisify(execFile);
  const env = { ...process.env, DOCKER: DOCKER, DOCKER_BUILDKIT: '1' };
  const { stdout } = await exec('test/docker/stand-ins/build.sh', [], { cwd: ROOT, env, maxBuffer: 1 << 24 });
  for (const line of stdout.split('\n')) {
    const [name, image] = line.split('=');
    if (name && image) process.env[name] = image;
  }
  // Behind a TLS-intercepting proxy, the CA bundle Node trusts here is the build's optional secret.
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  const secret = ca && existsSync(ca) ? ['--secret', `id=npm-ca,src=${ca}`] : [];
  const image = ['--build-arg', `NODE_IMAGE=${process.env.NODE_IMAGE}`, '-t', 'animal-store:local'];
  const build = ['build', '--quiet', ...secret, ...image, '.'];
  await exec(DOCKER, build, { cwd: ROOT, env, maxBuffer: 1 << 24, timeout: 900_000 }).catch(
    (error: Error & { stderr?: string }) => {
      throw new Error(`docker build failed:\n${error.stderr ?? error.message}`);
    },
  );
  process.stdout.write(`\ntest:docker: stand-ins and animal-store:local built in ${Date.now() - started} ms\n`);
}
