import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './support/database-server.js';
import { startEmbeddedPostgres, withPrivateFiles } from '../dev/embedded-postgres.js';

const root = process.getuid?.() === 0;

describe('withPrivateFiles', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'animal-store-umask-'));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  it('creates files for their owner alone, and restores the umask afterwards, even when initialising fails', async () => {
    const before = process.umask(0o022);
    try {
      await withPrivateFiles(() => writeFile(join(directory, 'inside'), 'secret'));
      await expect(withPrivateFiles(() => Promise.reject(new Error('initdb failed')))).rejects.toThrow('initdb failed');
      await writeFile(join(directory, 'after'), 'public');

      expect((await stat(join(directory, 'inside'))).mode & 0o777).toBe(0o600);
      expect((await stat(join(directory, 'after'))).mode & 0o777).toBe(0o644);
    } finally {
      process.umask(before);
    }
  });
});

/**
 * embedded-postgres writes the superuser's password to `pg-password-*` under os.tmpdir() while initdb runs. That
 * directory is watched so that each such file is seen while it exists; other clusters (other test files') may
 * write theirs meanwhile, so this cluster's is told by its content, the password kept in DATA_DIR.
 */
describe('startEmbeddedPostgres, initialising a new cluster', () => {
  let scratch: string;
  let watcher: FSWatcher | undefined;
  let savedUmask: number;
  beforeAll(async () => {
    savedUmask = process.umask(0o022); // the usual umask, under which the file used to be written 0644
    scratch = await mkdtemp(join(tmpdir(), 'animal-store-pwfile-'));
    // As root the cluster runs as `postgres`, which must enter DATA_DIR.
    await chmod(scratch, 0o755);
  });
  afterAll(async () => {
    watcher?.close();
    process.umask(savedUmask);
    await rm(scratch, { recursive: true, force: true });
  });

  it('never leaves the password file readable by other users', async () => {
    const seen: { mode: number; content: string }[] = [];
    watcher = watch(tmpdir(), (_event, name) => {
      if (!name?.startsWith('pg-password-')) return;
      const path = join(tmpdir(), name);
      void Promise.all([stat(path), readFile(path, 'utf8')]).then(
        ([found, content]) => seen.push({ mode: found.mode & 0o777, content }),
        () => undefined,
      );
    });

    const cluster = await startEmbeddedPostgres({ dataDir: scratch, port: await freePort() });
    await cluster.stop();

    const password = (await readFile(join(scratch, 'postgres.password'), 'utf8')).trim();
    const ours = seen.filter(({ content }) => content.trim() === password);
    expect(ours.length).toBeGreaterThan(0);
    // Never readable by other users.
    for (const { mode } of ours) expect(mode.toString(8)).toBe(root ? '640' : '600');
  }, 120_000);
});
