import { expect } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { ApiKeysRepository } from '../src/auth/api-keys/api-keys.repository.js';
import { generateApiKey, publicPrefix } from '../src/auth/api-keys/api-key-format.js';
import { keyDigest } from '../src/auth/key-digest.js';
import { request, startTestApp, TestApp, TEST_KEY } from './support/test-app.js';
import { clientScenarioTsconfig } from './support/client-scenario-tsconfig.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCENARIO = join(ROOT, 'test', 'generated-client', 'pets-scenario.ts');

const tsconfig = clientScenarioTsconfig(['pets-scenario.ts', 'animal-store-api.d.ts']);

/** A failed `execFile`, which carries what the child printed. */
type RunError = { stdout: string; stderr: string };
/** What pets-scenario.ts returns for each step; the test compares each step whole. */
type ScenarioStep = 'created' | 'listed' | 'fetched' | 'unauthorized' | 'badRequest' | 'forbidden';

describe('a client generated from the served document', () => {
  let t: TestApp;
  let workDir: string;

  beforeAll(async () => {
    t = await startTestApp();
    // Inside the repository (git-ignored) so that the scenario resolves openapi-fetch from node_modules.
    await mkdir(join(ROOT, 'test', 'artifacts'), { recursive: true });
    workDir = await mkdtemp(join(ROOT, 'test', 'artifacts', 'generated-client-'));
  });
  afterAll(async () => {
    await t.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it('type-checks with tsc and drives the service through create, filtered list, get, a 401, a 400 and a 403', async () => {
    const document = (await request<OpenAPI3>(t.origin, '/docs-json')).body;
    await writeFile(join(workDir, 'animal-store-api.d.ts'), astToString(await openapiTS(document)));
    await copyFile(SCENARIO, join(workDir, 'pets-scenario.ts'));
    await writeFile(join(workDir, 'tsconfig.json'), JSON.stringify(tsconfig));

    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', join(workDir, 'tsconfig.json')]).catch(
      (error: RunError) => {
        throw new Error(`tsc rejected the scenario:\n${error.stdout}${error.stderr}`);
      },
    );

    const { runPetsScenario } = (await import(pathToFileURL(join(workDir, 'out', 'pets-scenario.js')).href)) as {
      runPetsScenario: (
        baseUrl: string,
        apiKey: string,
        readOnlyKey: string,
      ) => Promise<Record<ScenarioStep, { pet?: unknown }>>;
    };
    // A key limited to pets:read, stored as the key CLI stores it.
    const readOnlyKey = generateApiKey();
    await t.app.get(ApiKeysRepository).insert({
      name: 'read only',
      prefix: publicPrefix(readOnlyKey),
      digest: keyDigest(readOnlyKey),
      scopes: ['pets:read'],
      expiresInMs: null,
    });
    const result = await runPetsScenario(`${t.origin}/v1`, TEST_KEY, readOnlyKey);

    const pet = { id: expect.any(Number), name: 'Generated', categoryId: 7, status: 'pending' };
    expect(result.created).toEqual({ status: 201, pet });
    expect(result.listed).toEqual({ status: 200, pets: [result.created.pet] });
    expect(result.fetched).toEqual({ status: 200, pet: result.created.pet, sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' });
    expect(result.unauthorized).toEqual({ status: 401, code: 'unauthorized' });
    expect(result.badRequest).toEqual({ status: 400, code: 'validation_failed' });
    expect(result.forbidden).toEqual({
      status: 403,
      code: 'insufficient_scope',
      challenge: 'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"',
    });
    expect(await t.sql.query("SELECT 1 FROM pets WHERE name = 'Refused'")).toMatchObject({ rowCount: 0 });
  }, 120_000);
});
