import { expect } from '@jest/globals';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import type { OpenAPIObject, SchemaObject } from '@nestjs/swagger';
import { ApiKeysRepository } from '../src/auth/api-keys/api-keys.repository.js';
import { generateApiKey, publicPrefix } from '../src/auth/api-keys/api-key-format.js';
import { keyDigest } from '../src/auth/key-digest.js';
import { NAME_UNICODE_RULE } from '../src/pets/dto/is-pet-name.decorator.js';
import { HOSTILE_STRINGS } from './support/fuzz/hostile-values.js';
import { jsonBody, request, TEST_KEY } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

// @hey-api/openapi-ts is pinned to the last minor that runs on Node 20.19 (later ones need 22.18), so the same
// generator runs on every Node CI uses. Its fetch client, SDK (validating with zod) and zod schemas:
const GENERATE_HEY_API = `
import { createClient } from '@hey-api/openapi-ts';
await createClient({
  input: 'openapi.json',
  output: 'client',
  logs: { level: 'silent' },
  plugins: ['@hey-api/client-fetch', 'zod', { name: '@hey-api/sdk', validator: true }],
});
`;

/** A failed `execFile`, which carries what the child printed. */
const failed = (what: string) => (error: { stdout: string; stderr: string }) => {
  throw new Error(`${what}:\n${error.stdout}${error.stderr}`);
};

/**
 * Compiles test/<scenario>/pets-scenario.ts beside the client `generate` writes, as a client developer's project
 * would (NodeNext modules, fetch's DOM types, nothing from this repository), and imports it. The directory is in
 * the repository (git-ignored), so that the client resolves openapi-fetch and zod from node_modules.
 */
async function compileScenario<T>(scenario: string, generate: (dir: string) => Promise<string[]>) {
  await mkdir(join(ROOT, 'test', 'artifacts'), { recursive: true });
  const dir = await mkdtemp(join(ROOT, 'test', 'artifacts', `${scenario}-`));
  const files = ['pets-scenario.ts', ...(await generate(dir))];
  await copyFile(join(ROOT, 'test', scenario, 'pets-scenario.ts'), join(dir, 'pets-scenario.ts'));
  const compilerOptions = {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'ES2023',
    lib: ['ES2024', 'DOM'],
    types: [],
    strict: true,
    skipLibCheck: true,
    rootDir: '.',
    outDir: 'out',
  };
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')]).catch(failed('tsc rejected the scenario'));
  await writeFile(join(dir, 'out', 'package.json'), '{"type":"module"}');
  return { dir, scenario: (await import(pathToFileURL(join(dir, 'out', 'pets-scenario.js')).href)) as T };
}

describe('clients generated from the served document', () => {
  const t = testAppPerBlock();
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it('openapi-typescript and openapi-fetch: type-checks, then creates, lists, gets, and reads a 401, a 400 and a 403', async () => {
    const document = (await request<OpenAPI3>(t.origin, '/docs-json')).body;
    const { dir, scenario } = await compileScenario<{
      runPetsScenario(baseUrl: string, apiKey: string, readOnlyKey: string): Promise<Record<string, { pet?: unknown }>>;
    }>('generated-client', async (into) => {
      await writeFile(join(into, 'animal-store-api.d.ts'), astToString(await openapiTS(document)));
      return ['animal-store-api.d.ts'];
    });
    dirs.push(dir);
    // A key limited to pets:read, stored as the key CLI stores it.
    const readOnlyKey = generateApiKey();
    await t.app.get(ApiKeysRepository).insert({
      name: 'read only',
      prefix: publicPrefix(readOnlyKey),
      digest: keyDigest(readOnlyKey),
      scopes: ['pets:read'],
      expiresInMs: null,
    });
    const result = await scenario.runPetsScenario(`${t.origin}/v1`, TEST_KEY, readOnlyKey);

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

  describe('@hey-api/openapi-ts: fetch client, SDK and zod schemas', () => {
    let dir: string;
    let scenario: {
      runPetsScenario(baseUrl: string, apiKey: string): Promise<Record<string, { pet?: unknown }>>;
      clientAcceptsName(name: string): boolean;
    };

    beforeAll(async () => {
      ({ dir, scenario } = await compileScenario<typeof scenario>('hey-api-client', async (into) => {
        await writeFile(join(into, 'openapi.json'), (await request(t.origin, '/docs-json')).text);
        await writeFile(join(into, 'generate.mjs'), GENERATE_HEY_API);
        await run(process.execPath, ['generate.mjs'], { cwd: into }).catch(failed('@hey-api/openapi-ts failed'));
        return [];
      }));
      dirs.push(dir);
    }, 180_000);

    // Finding 7: the generated client calls the production placeholder until configured; docs/clients.md gives the line.
    it('defaults to the placeholder production server, which the scenario replaces with one setConfig line; creates a pet with an emoji, pages through Link, reads an Error, calls the deprecated getPet, keeps int64 ids as numbers', async () => {
      const generated = await readFile(join(dir, 'client', 'client.gen.ts'), 'utf8');
      expect(generated).toContain("baseUrl: 'https://api.example.com/v1'");
      expect(await readFile(join(ROOT, 'docs', 'clients.md'), 'utf8')).toContain("client.setConfig({ baseUrl: '");
      const result = await scenario.runPetsScenario(`${t.origin}/v1`, TEST_KEY);

      const pet = { id: expect.any(Number), name: 'Rex 🐶', categoryId: 7, status: 'pending' };
      expect(result.created).toEqual({ status: 201, pet, requestChecked: true, responseChecked: true });
      expect(result.paged).toEqual({ pages: 2, names: ['Page 0', 'Page 1', 'Page 2', 'Page 3'] });
      expect(result.fetched).toEqual({
        status: 200,
        pet: result.created.pet,
        deprecation: '@1795132800',
        sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      });
      expect(result.missing).toEqual({
        status: 404,
        error: { code: 'not_found', message: expect.any(String), status: 404 },
        errorChecked: true,
      });
      // The SDK's data keeps numbers; zod-parsed copies hold bigint, which the replacer docs/clients.md gives writes.
      expect(result.ids).toEqual({
        parsedType: 'bigint',
        stringifyError: 'TypeError',
        asJson: JSON.stringify(result.created.pet),
        dataType: 'number',
      });
    });

    // Client and service agree on every name, except by a rule the document states in words only (no unpaired
    // surrogate, not only Unicode whitespace): the service refuses those, the client cannot (docs/clients.md).
    it('agrees with the service on every hostile name of the fuzzing suite', async () => {
      const document = (await request<OpenAPIObject>(t.origin, '/docs-json')).body;
      const newPet = document.components!.schemas!.NewPet as SchemaObject;
      const described = (newPet.properties!.name as SchemaObject).description!;
      const disagreements: string[] = [];
      for (const name of HOSTILE_STRINGS) {
        const response = await request(t.origin, '/v1/pets', jsonBody({ name, categoryId: 1 }));
        const serviceAccepts = response.status === 201;
        if (!serviceAccepts && response.status !== 400 && response.status !== 413) {
          throw new Error(`${JSON.stringify(name.slice(0, 20))}: the service answered ${response.status}`);
        }
        const clientAccepts = scenario.clientAcceptsName(name);
        const statedInWords = described.includes(NAME_UNICODE_RULE.description) && !NAME_UNICODE_RULE.test(name);
        if (clientAccepts !== serviceAccepts && !(statedInWords && clientAccepts && !serviceAccepts)) {
          disagreements.push(
            `${JSON.stringify(name.slice(0, 20))}: client ${clientAccepts}, service ${response.status}`,
          );
        }
      }
      expect(disagreements).toEqual([]);
    });
  });
});
