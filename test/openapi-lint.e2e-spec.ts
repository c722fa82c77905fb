import { jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenAPIObject, ParameterObject, RequestBodyObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { OPENAPI_FILE } from '../dev/build-openapi-document.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SPECTRAL = join(ROOT, 'node_modules', '@stoplight', 'spectral-cli', 'dist', 'index.js');
const REDOCLY = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
// No usage report and no update check: the linters run offline, from node_modules only.
const OFFLINE = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

interface SpectralProblem {
  code: string;
  message: string;
  severity: number;
  path: string[];
}

interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: 'error' | 'warn'; message: string; location: { pointer: string }[] }[];
}

/** Lints `openapi.json` in `cwd` with this Node; the JSON report is on stdout whatever the exit code. */
function lint<T>(cli: string, args: string[], cwd: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const options = { cwd, env: OFFLINE, maxBuffer: 16 * 1024 * 1024 };
    execFile(process.execPath, [cli, 'lint', 'openapi.json', ...args], options, (error, stdout, stderr) => {
      if (/^\s*[[{]/.test(stdout)) return resolve(JSON.parse(stdout) as T);
      reject(new Error(`${cli} ${args.join(' ')} printed no report (${error?.message ?? 'no error'}):\n${stderr}`));
    });
  });
}

const spectral = (directory: string) =>
  lint<SpectralProblem[]>(SPECTRAL, ['--ruleset', join(ROOT, '.spectral.yaml'), '-f', 'json', '--quiet'], directory);

const redocly = (directory: string) =>
  lint<RedoclyReport>(REDOCLY, ['--config', join(ROOT, 'redocly.yaml'), '--format=json'], directory);

const ERROR = 0; // Spectral's severities: 0 error, 1 warning, 2 information, 3 hint.

describe('openapi.json under the linters client developers use', () => {
  jest.setTimeout(120_000);

  it('has no Spectral error (spectral:oas and the OWASP API Security ruleset)', async () => {
    const errors = (await spectral(ROOT)).filter((problem) => problem.severity === ERROR);
    expect(errors.map((p) => `${p.code} at ${p.path.join('/')}: ${p.message}`).join('\n')).toBe('');
  });

  it("has no error under Redocly's recommended rules", async () => {
    const report = await redocly(ROOT);
    const errors = report.problems.filter((problem) => problem.severity === 'error');
    expect(errors.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  describe('catch what they are there for (a copy of the document with a fault put in)', () => {
    let directory: string;

    beforeAll(async () => {
      directory = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    });
    afterAll(() => rm(directory, { recursive: true, force: true }));

    async function writeBroken(change: (document: OpenAPIObject) => void): Promise<void> {
      const document = JSON.parse(await readFile(OPENAPI_FILE, 'utf8')) as OpenAPIObject;
      change(document);
      await writeFile(join(directory, 'openapi.json'), JSON.stringify(document, null, 2));
    }

    it('Spectral: a 2XX without the rate-limit headers, a list without maxItems, a string without bounds', async () => {
      await writeBroken((document) => {
        const list = document.paths['/pets'].get!;
        const ok = list.responses['200'] as ResponseObject;
        delete ok.headers!['X-RateLimit-Limit'];
        delete (ok.content!['application/json'].schema as SchemaObject).maxItems;
        const cursor = (list.parameters as ParameterObject[]).find((p) => p.name === 'cursor')!;
        delete (cursor.schema as SchemaObject).maxLength;
      });
      const codes = (await spectral(directory)).filter((p) => p.severity === ERROR).map((p) => p.code);
      expect(codes).toEqual(
        expect.arrayContaining([
          'owasp:api4:2023-rate-limit',
          'owasp:api4:2023-array-limit',
          'owasp:api4:2023-string-limit',
        ]),
      );
    });

    it('Redocly: a reference to a schema that does not exist', async () => {
      await writeBroken((document) => {
        const body = document.paths['/pets'].post!.requestBody as RequestBodyObject;
        body.content['application/json'].schema = { $ref: '#/components/schemas/Missing' };
      });
      const report = await redocly(directory);
      expect(report.problems.filter((p) => p.severity === 'error').map((p) => p.ruleId)).toContain(
        'no-unresolved-refs',
      );
    });
  });

  it('loads its rulesets from node_modules only, so it runs offline', async () => {
    const ruleset = await readFile(join(ROOT, '.spectral.yaml'), 'utf8');
    expect(ruleset).toContain(
      '  - spectral:oas\n  - ./node_modules/@stoplight/spectral-owasp-ruleset/dist/ruleset.mjs\n',
    );
    expect(ruleset).not.toMatch(/https?:\/\//);
    expect(await readFile(join(ROOT, 'redocly.yaml'), 'utf8')).toContain('  - recommended\n');
  });
});
