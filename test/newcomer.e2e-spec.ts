import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, run } from './support/built-service.js';
import { jsonBody, request, TEST_KEY } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

/** What the README tells a newcomer around the two commands, and what a passing `npm test` shows them. */
let readme: string;
beforeAll(async () => {
  readme = await readFile(join(ROOT, 'README.md'), 'utf8');
});

/** The README's shell block containing `marker`. */
function shellBlock(marker: string): string {
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((match) => match[1])
    .find((text) => text.includes(marker));
  if (!block) throw new Error(`no sh block in README.md contains ${marker}`);
  return block;
}

describe('README: the pagination loop', () => {
  const t = testAppPerBlock();
  beforeAll(async () => {
    for (let index = 0; index < 3; index += 1) {
      expect((await request(t.origin, '/v1/pets', jsonBody({ name: `Pet ${index}`, categoryId: 1 }))).status).toBe(201);
    }
  });

  it('reads every page and leaves no file behind in the directory it runs from', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'animal-store-readme-'));
    try {
      await mkdir(join(directory, '.data'));
      await writeFile(join(directory, '.data', 'dev-api-key'), TEST_KEY);
      // The loop as printed, against this test's service and with pages of 2 so that it follows a link.
      const script = shellBlock('rel="next"')
        .replace('BASE=http://127.0.0.1:3000', `BASE=${t.origin}`)
        .replace('limit=100', 'limit=2');
      const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
        cwd: directory,
        timeout: 30_000,
      });
      const pages = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { name: string }[]);
      expect(pages.map((page) => page.map((pet) => pet.name))).toEqual([['Pet 0', 'Pet 1'], ['Pet 2']]);
      expect(await readdir(directory)).toEqual(['.data']);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('README: next to the two commands', () => {
  it('says how to reset local data, and which variables move the two ports the service takes', () => {
    const nearTheCommands = readme.slice(0, readme.indexOf('## Try it'));
    expect(nearTheCommands).toMatch(/delete `DATA_DIR`/);
    expect(nearTheCommands).toContain('rm -rf .data');
    expect(nearTheCommands).toMatch(/`PORT`[^\n]*3000|3000[^\n]*`PORT`/);
    expect(nearTheCommands).toContain('`EMBEDDED_POSTGRES_PORT`');
    expect(nearTheCommands).toMatch(/3000 or 5433 taken/);
  });
});

describe('npm test', () => {
  it('passes quietly: no ExperimentalWarning, no WARN lines from specs that provoke warnings on purpose', async () => {
    const finished = await run(
      'npm',
      ['test', '--', 'src/database/data-source-options.spec.ts', 'src/config/app-config.spec.ts'],
      { ...process.env, CI: 'true' },
      180_000,
    );
    // Without npm's echo of the script ("> node --disable-warning=ExperimentalWarning …").
    const output = `${finished.stdout}\n${finished.stderr}`
      .split('\n')
      .filter((line) => !line.startsWith('> '))
      .join('\n');
    if (finished.code !== 0) throw new Error(`npm test exited with ${finished.code}:\n${output}`);
    expect(output).toMatch(/Tests:\s+\d+ passed/);
    expect(output).not.toMatch(/ExperimentalWarning|\bWARN\b|Warning:/);
  }, 200_000);
});
