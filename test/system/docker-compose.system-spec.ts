import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// Needs Debian's docker-compose (no engine): run by `npm run test:system`, not `npm test`.
describe('docker-compose.yml', () => {
  it('is valid for docker-compose', async () => {
    // With a clean environment, so the file's own defaults are what gets validated.
    const { stdout, stderr } = await promisify(execFile)('docker-compose', ['config', '-q'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(stdout + stderr).toBe('');
  });
});

describe('docker-compose.fleet.yml (several API replicas behind HAProxy)', () => {
  it('is valid for docker-compose', async () => {
    const { stdout, stderr } = await promisify(execFile)(
      'docker-compose',
      ['-f', 'docker-compose.fleet.yml', 'config', '-q'],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '' },
      },
    );
    expect(stdout + stderr).toBe('');
  });

  it('has a load balancer configuration HAProxy accepts', async () => {
    const { stdout, stderr } = await promisify(execFile)('haproxy', ['-c', '-f', 'compose/haproxy.cfg'], { cwd: ROOT });
    expect(stdout + stderr).toMatch(/Configuration file is valid/);
  });
});
