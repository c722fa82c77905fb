import { readFile } from 'node:fs/promises';
import type { OpenAPIObject } from '@nestjs/swagger';
import { OpenApiResponseValidator } from './openapi-response-validator.js';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
const pet = { id: 1, name: 'Rex', categoryId: 2, status: 'available' };
const error = (status: number, code = 'not_found') => ({ code, message: 'Something.', status });
const deprecation = { Deprecation: '@1795132800', Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT', Link: '</v1/pets>; rel="successor-version"' };

describe('OpenApiResponseValidator', () => {
  let validator: OpenApiResponseValidator;
  const check = (method: string, path: string, status: number, body: unknown, headers: Record<string, string> = JSON_TYPE) =>
    () =>
      validator.validate(method, new URL(`http://127.0.0.1:1${path}`), {
        status,
        headers: new Headers(headers),
        text: typeof body === 'string' ? body : JSON.stringify(body),
      });

  beforeAll(async () => {
    const document = JSON.parse(await readFile(new URL('../../openapi.json', import.meta.url), 'utf8')) as OpenAPIObject;
    validator = new OpenApiResponseValidator(document);
  });

  it('accepts responses the document describes', () => {
    expect(check('GET', '/v1/pets?status=sold', 200, [pet])).not.toThrow();
    expect(check('POST', '/v1/pets', 201, pet)).not.toThrow();
    expect(check('GET', '/v1/pets/1', 200, pet, { ...JSON_TYPE, ...deprecation })).not.toThrow();
    expect(check('GET', '/v1/pets/1', 404, error(404))).not.toThrow();
    expect(check('HEAD', '/v1/pets', 200, '')).not.toThrow();
    expect(check('GET', '/v1/pets', 503, error(503, 'service_unavailable'), { ...JSON_TYPE, 'retry-after': '5' })).not.toThrow();
  });

  it('rejects a status the operation does not declare', () => {
    expect(check('GET', '/v1/pets', 404, error(404))).toThrow(/status 404 is not declared for listPets/);
    expect(check('POST', '/v1/pets', 200, pet)).toThrow(/status 200 is not declared for createPet/);
  });

  it('rejects bodies that do not match the schema, including undocumented fields', () => {
    expect(check('GET', '/v1/pets', 200, [{ ...pet, id: '1' }])).toThrow(/\/0\/id must be integer/);
    expect(check('POST', '/v1/pets', 201, { ...pet, createdAt: 'now' })).toThrow(/must NOT have additional properties/);
    expect(check('GET', '/v1/pets', 200, [{ ...pet, status: 'lost' }])).toThrow(/must be equal to one of the allowed values/);
    expect(check('POST', '/v1/pets', 400, { code: 'oops', message: 'x', status: 400 })).toThrow(/\/code/);
    expect(check('POST', '/v1/pets', 400, error(422, 'validation_failed'))).toThrow(/status differs/);
  });

  it('rejects a body that is not application/json', () => {
    expect(check('GET', '/v1/pets', 200, [pet], { 'content-type': 'text/plain' })).toThrow(/not application\/json/);
  });

  it('rejects a response missing a required header', () => {
    expect(check('GET', '/v1/pets/1', 200, pet)).toThrow(/required header\(s\) missing: Deprecation, Sunset, Link/);
    expect(check('GET', '/v1/pets', 503, error(503, 'service_unavailable'))).toThrow(/Retry-After/);
    expect(check('GET', '/v1/pets', 401, error(401, 'unauthorized'))).toThrow(/WWW-Authenticate/);
  });

  it('requires an Error for requests no operation describes', () => {
    expect(check('PUT', '/v1/pets', 405, error(405, 'method_not_allowed'))).not.toThrow();
    expect(check('GET', '/nowhere', 404, error(404))).not.toThrow();
    expect(check('GET', '/v1/pets/', 404, error(404))).not.toThrow();
    expect(check('GET', '/nowhere', 404, 'Not Found', { 'content-type': 'text/plain' })).toThrow(/not application\/json/);
    expect(check('PUT', '/v1/pets', 405, { message: 'no' })).toThrow(/must have required property 'code'/);
  });

  it('rejects successes under /v1 that no operation describes, and leaves the docs routes alone', () => {
    expect(check('DELETE', '/v1/pets/1', 204, '')).toThrow(/no operation is documented/);
    expect(check('GET', '/docs', 200, '<html></html>', { 'content-type': 'text/html' })).not.toThrow();
  });
});
