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
