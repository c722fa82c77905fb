import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILD_SOURCES, ensureBuilt, ROOT, run, runBuilt } from '../support/built-service.js';
import { freePort } from '../support/database-server.js';

const root = process.getuid?.() === 0;
// The project files a clone holds, hard-linked (a copy of node_modules would take minutes).
const CLONED = [...BUILD_SOURCES, 'node_modules', 'dist', 'test', 'package-lock.json', 'jest.config.js'];

/**
 * A clone in a directory only its owner can enter, like /root on Debian and in most images. As root, PostgreSQL
 * runs as the `postgres` user, which cannot reach the binaries or the data there: `npm start` and `npm test`
 * must then stop with one line naming the cause and the fix, never a stack. As another user it simply works.
 */
describe('a clone in a directory only its owner can enter', () => {
  let clone: string;
  beforeAll(async () => {
    await ensureBuilt();
    const parent = root && existsSync('/root') ? '/root' : homedir() || tmpdir();
    clone = await mkdtemp(join(parent, 'animal-store-clone-')); // mode 0700
    const copied = await run('cp', ['-al', ...CLONED.map((entry) => join(ROOT, entry)), clone], process.env, 120_000);
    expect(copied).toMatchObject({ code: 0, stderr: '' });
  }, 300_000);
  afterAll(() => rm(clone, { recursive: true, force: true }), 60_000);

  it(`the service ${root ? 'stops with one line naming the cause and the fix' : 'starts'}`, async () => {
    const env = {
      PORT: String(await freePort()),
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      // Without a root check the service would start: bounded, and stopped by the timeout below.
      SHUTDOWN_GRACE_MS: '0',
    };
    const finished = await runBuilt(clone, 'dev/start.js', [], env, 60_000);
    if (root) {
      expect(finished.code).toBe(1);
      expect(finished.stderr.split('\n').filter(Boolean)).toEqual([
        expect.stringMatching(
          /^PostgreSQL runs as the "postgres" user when started by root, and that user cannot enter \/root .*set DATABASE_URL/,
        ),
      ]);
      expect(`${finished.stdout}${finished.stderr}`).not.toMatch(/EACCES|\n\s+at /);
    } else {
      // It ran until the timeout killed it, and never failed on its own.
      expect(finished.code).toBeNull();
      expect(finished.stderr).toBe('');
    }
  }, 90_000);

  it(`npm test ${root ? 'stops with one line naming the cause and the fix' : 'runs'}`, async () => {
    const args = ['test', '--', 'src/config/app-config.spec.ts'];
    const finished = await run('npm', args, { ...process.env, CI: 'true' }, 180_000, { cwd: clone });
    const output = `${finished.stdout}\n${finished.stderr}`;
    if (root) {
      expect(finished.code).toBe(1);
      expect(output).toMatch(
        /^Test database: PostgreSQL runs as the "postgres" user when started by root, .*set TEST_DATABASE_URL/m,
      );
      expect(output).not.toMatch(/\n\s+at /);
    } else {
      expect(finished.code).toBe(0);
    }
  }, 200_000);
});
