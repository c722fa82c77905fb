import { expect } from '@jest/globals';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIObject, OperationObject, ParameterObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { readFile } from 'node:fs/promises';
import { ERROR_CODES } from '../src/edge/errors/error-code.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../src/pets/idempotency/idempotency-key.decorator.js';
import { LIMIT_MAX } from '../src/pets/dto/list-pets.query.js';
import { NAME_PATTERN, NAME_UNICODE_RULE } from '../src/pets/dto/is-pet-name.decorator.js';
import { CURSOR_LENGTH } from '../src/pets/page-cursor.codec.js';
import { RATE_LIMIT_HEADERS } from '../src/auth/rate-limit/rate-limited.error.js';
import { buildOpenApiDocument, OPENAPI_FILE, serializeOpenApiDocument } from './build-openapi-document.js';

const ERROR_REF = { $ref: '#/components/schemas/Error' };

describe('OpenAPI document', () => {
  let document: OpenAPIObject;
  const operation = (path: string, method: 'get' | 'post') => document.paths[path][method] as OperationObject;
  const schema = (name: string) => document.components!.schemas![name] as SchemaObject;
  const response = (op: OperationObject, status: number) => op.responses[status] as ResponseObject;

  beforeAll(async () => {
    document = await buildOpenApiDocument();
  });

  it('is what the committed openapi.json says (run `npm run openapi` after changing the API)', async () => {
    expect(await readFile(OPENAPI_FILE, 'utf8')).toBe(serializeOpenApiDocument(document));
  });

  it('is a valid OpenAPI 3 document', async () => {
    const validated = await SwaggerParser.validate(structuredClone(document) as never);
    expect((validated as { openapi?: string }).openapi).toMatch(/^3\./);
  });

  it('has version 1.0.0 and servers ending in /v1, with paths relative to them', () => {
    expect(document.info.version).toBe('1.0.0');
    expect(document.servers!.every((server) => (server as { 'x-internal'?: boolean })['x-internal'] === false)).toBe(
      true,
    );
    expect(document.servers!.map((server) => server.url)).toEqual([
      'https://api.example.com/v1',
      'https://staging-api.example.com/v1',
      'v1',
    ]);
    expect(Object.keys(document.paths).sort()).toEqual(['/pets', '/pets/{petId}']);
  });

  it('has listPets, createPet and getPet, each tagged animals only', () => {
    const operations = [operation('/pets', 'get'), operation('/pets', 'post'), operation('/pets/{petId}', 'get')];
    expect(operations.map((op) => op.operationId)).toEqual(['listPets', 'createPet', 'getPet']);
    for (const op of operations) expect(op.tags).toEqual(['animals']);
  });

  it('marks getPet deprecated, names its removal date and successor, and documents its headers', () => {
    const getPet = operation('/pets/{petId}', 'get');
    expect(getPet.deprecated).toBe(true);
    expect(getPet.description).toContain('5 December 2030');
    expect(getPet.description).toContain('`GET /pets` with the `status` filter');
    const rateLimit = Object.values(RATE_LIMIT_HEADERS);
    const headers = ['Deprecation', 'Sunset', 'Link', ...rateLimit, 'Cache-Control'];
    expect(Object.keys(response(getPet, 200).headers!)).toEqual(headers);
    expect(Object.keys(response(getPet, 404).headers!)).toEqual(headers);
  });

  it('applies one http bearer scheme to every operation', () => {
    expect(document.components!.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(document.security).toEqual([{ bearer: [] }]);
    for (const item of Object.values(document.paths)) {
      for (const op of [item.get, item.post].filter(Boolean)) expect(op!.security).toBeUndefined();
    }
  });

  it('names Pet, NewPet, PetStatus and Error, with PetStatus referenced rather than inlined', () => {
    expect(Object.keys(document.components!.schemas!)).toEqual(
      expect.arrayContaining(['Pet', 'NewPet', 'PetStatus', 'Error']),
    );
    expect(schema('PetStatus')).toEqual({ type: 'string', enum: ['available', 'pending', 'sold'] });
    const statusRef = { $ref: '#/components/schemas/PetStatus' };
    expect(schema('Pet').properties!.status).toMatchObject({ allOf: [statusRef] });
    expect(schema('NewPet').properties!.status).toEqual({ default: 'available', allOf: [statusRef] });
    const statusParameter = operation('/pets', 'get').parameters!.find((p) => (p as ParameterObject).name === 'status');
    expect(statusParameter).toEqual({ name: 'status', in: 'query', required: false, schema: statusRef });
    const enums: unknown[] = [];
    JSON.stringify(document, (key, value: unknown) => (key === 'enum' ? void enums.push(value) : value));
    const multiValued = enums.filter(
      (values) => (values as unknown[]).length > 1 && !JSON.stringify(values).includes('Bearer'),
    );
    expect(multiValued).toEqual([schema('PetStatus').enum, ERROR_CODES]);
  });

  it('types ids as int64 integers and documents the name bounds and pattern', () => {
    for (const name of ['Pet', 'NewPet']) {
      expect(schema(name).properties!.categoryId).toMatchObject({ type: 'integer', format: 'int64' });
      expect(schema(name).properties!.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 });
    }
    // The portable part of the rule as the pattern, the rest in words, so that a client following the document
    // is not refused for a reason it could not know.
    expect(schema('NewPet').properties!.name).toMatchObject({ pattern: NAME_PATTERN });
    expect((schema('NewPet').properties!.name as SchemaObject).description).toContain(NAME_UNICODE_RULE.description);
    expect(schema('Pet').properties!.id).toMatchObject({
      type: 'integer',
      format: 'int64',
      maximum: Number.MAX_SAFE_INTEGER,
    });
    // Every response carries every field (toPet), so none is optional for a client.
    expect(schema('Pet').required).toEqual(['id', 'name', 'categoryId', 'status']);
    expect(schema('NewPet').required).toEqual(['name', 'categoryId']);
    // The service refuses unknown properties (400 `property colour should not exist`), and says so.
    expect(schema('NewPet').additionalProperties).toBe(false);
    expect(operation('/pets/{petId}', 'get').parameters).toEqual([
      expect.objectContaining({
        name: 'petId',
        in: 'path',
        required: true,
        schema: expect.objectContaining({ type: 'integer', format: 'int64' }),
      }),
    ]);
  });

  it('describes limit as an optional integer from 1 to 100, default 20', () => {
    const limit = operation('/pets', 'get').parameters!.find((p) => (p as ParameterObject).name === 'limit');
    expect(limit).toEqual({
      name: 'limit',
      in: 'query',
      required: false,
      schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 100, default: 20 },
    });
  });

  it('bounds the cursor by the length the codec issues, and the page by the largest limit', () => {
    const cursor = operation('/pets', 'get').parameters!.find(
      (p) => (p as ParameterObject).name === 'cursor',
    ) as ParameterObject;
    expect(cursor.schema).toMatchObject({ type: 'string', maxLength: CURSOR_LENGTH });
    expect(response(operation('/pets', 'get'), 200).content!['application/json'].schema).toMatchObject({
      maxItems: LIMIT_MAX,
    });
  });

  it('describes createPet and publishes the Idempotency-Key rule, which a lone space does not meet', () => {
    const createPet = operation('/pets', 'post');
    expect(createPet.description).toEqual(expect.stringContaining('Idempotency-Key'));
    const key = createPet.parameters!.find((p) => (p as ParameterObject).name === 'Idempotency-Key') as ParameterObject;
    expect(key.schema).toEqual({ type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN });
    expect(new RegExp(IDEMPOTENCY_KEY_PATTERN).test(' ')).toBe(false);
  });

  // The per-key budget's headers are on every response once the key is accepted; 401, 403 (the guard refuses the
  // key's scope before the budget is counted), 408, 413 and 415 are answered before that, 429 always carries them. test/support/openapi-response-validator.ts checks the live responses.
  it.each([
    ['/pets', 'get'],
    ['/pets', 'post'],
    ['/pets/{petId}', 'get'],
  ] as const)('declares the rate-limit headers on every response of %s %s that carries them', (path, method) => {
    const names = Object.values(RATE_LIMIT_HEADERS);
    for (const [status, declared] of Object.entries(operation(path, method).responses) as [string, ResponseObject][]) {
      const headers = declared.headers ?? {};
      const required = names.map((name) => (headers[name] as { required?: boolean } | undefined)?.required);
      if (['401', '403', '408', '413', '415'].includes(status))
        expect([status, required]).toEqual([status, [undefined, undefined, undefined]]);
      else if (status === '429') expect([status, required]).toEqual([status, [true, true, true]]);
      else expect([status, required]).toEqual([status, [false, false, false]]);
    }
  });

  it.each([
    ['/pets', 'get', 'pets:read'],
    ['/pets', 'post', 'pets:write'],
    ['/pets/{petId}', 'get', 'pets:read'],
  ] as const)('names the scope %s %s needs, and declares its 403 with the challenge', (path, method, scope) => {
    const op = operation(path, method);
    expect((op as unknown as Record<string, unknown>)['x-required-scopes']).toEqual([scope]);
    expect(op.description).toContain(`Needs an API key with the \`${scope}\` scope`);
    const forbidden = response(op, 403);
    expect(forbidden.headers!['WWW-Authenticate']).toMatchObject({
      required: true,
      schema: { type: 'string', enum: [`Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`] },
    });
    expect(forbidden.content!['application/json'].example).toMatchObject({ code: 'insufficient_scope', status: 403 });
  });

  it('declares Cache-Control: no-store, required, on every response of every operation', () => {
    for (const { responses } of [
      operation('/pets', 'get'),
      operation('/pets', 'post'),
      operation('/pets/{petId}', 'get'),
    ]) {
      for (const [status, declared] of Object.entries(responses) as [string, ResponseObject][]) {
        expect([status, declared.headers?.['Cache-Control']]).toEqual([
          status,
          expect.objectContaining({ required: true, schema: { type: 'string', enum: ['no-store'] } }),
        ]);
      }
    }
  });

  it('requires code, message and status in Error and lists the closed set of codes', () => {
    expect(schema('Error').required).toEqual(['code', 'message', 'status']);
    expect(schema('Error').properties!.code).toMatchObject({ allOf: [{ $ref: '#/components/schemas/ErrorCode' }] });
    expect(schema('ErrorCode').enum).toEqual(ERROR_CODES);
    expect(schema('Error').properties!.status).toMatchObject({ type: 'integer' });
  });

  it.each([
    ['/pets', 'get', [200, 400, 401, 403, 408, 429, 500, 503]],
    ['/pets', 'post', [201, 400, 401, 403, 408, 409, 413, 415, 422, 429, 500, 503]],
    ['/pets/{petId}', 'get', [200, 400, 401, 403, 404, 408, 429, 500, 503]],
  ] as const)('declares the statuses %s %s really answers, every error as Error by $ref', (path, method, statuses) => {
    const op = operation(path, method);
    expect(Object.keys(op.responses).map(Number)).toEqual(statuses);
    for (const status of statuses.filter((s) => s >= 400)) {
      expect(response(op, status).content).toEqual({
        'application/json': { schema: ERROR_REF, example: expect.objectContaining({ status }) },
      });
    }
    expect(response(op, 401).headers!['WWW-Authenticate']).toMatchObject({ required: true });
    expect(response(op, 429).headers!['Retry-After']).toMatchObject({ required: true });
    expect(response(op, 503).headers!['Retry-After']).toMatchObject({ required: true });
  });

  it('describes the success bodies: an array of Pet for listPets, a Pet otherwise', () => {
    const petRef = { $ref: '#/components/schemas/Pet' };
    expect(response(operation('/pets', 'get'), 200).content!['application/json'].schema).toEqual({
      type: 'array',
      maxItems: 100,
      items: petRef,
    });
    expect(response(operation('/pets', 'post'), 201).content!['application/json'].schema).toEqual(petRef);
    expect(response(operation('/pets/{petId}', 'get'), 200).content!['application/json'].schema).toEqual(petRef);
    expect(operation('/pets', 'post').requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } },
    });
  });
});
