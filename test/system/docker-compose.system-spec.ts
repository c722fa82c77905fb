import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from '../support/built-service.js';

// Needs Debian's docker-compose (no engine): run by `npm run test:system`, not `npm test`.
// With a clean environment, so the files' own defaults are what gets validated.
const config = (files: string[]) =>
  promisify(execFile)('docker-compose', [...files.flatMap((file) => ['-f', file]), 'config', '-q'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '' },
  });

describe('docker-compose.yml', () => {
  it('is valid for docker-compose', async () => {
    const { stdout, stderr } = await config(['docker-compose.yml']);
    expect(stdout + stderr).toBe('');
  });
});

describe('docker-compose.fleet.yml (several API replicas behind HAProxy)', () => {
  it('is valid for docker-compose, alone and with its streaming replica (docker-compose.replica.yml)', async () => {
    for (const files of [['docker-compose.fleet.yml'], ['docker-compose.fleet.yml', 'docker-compose.replica.yml']]) {
      const { stdout, stderr } = await config(files);
      expect({ files, output: stdout + stderr }).toEqual({ files, output: '' });
    }
  });

  it('has a load balancer configuration HAProxy accepts', async () => {
    const { stdout, stderr } = await promisify(execFile)('haproxy', ['-c', '-f', 'compose/haproxy.cfg'], { cwd: ROOT });
    expect(stdout + stderr).toMatch(/Configuration file is valid/);
  });
});
