import { readFile } from 'node:fs/promises';
import type { OpenAPIObject } from '@nestjs/swagger';
import { OpenApiResponseValidator } from './openapi-response-validator.js';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
const pet = { id: 1, name: 'Rex', categoryId: 2, status: 'available' };
const error = (status: number, code = 'not_found') => ({ code, message: 'Something.', status });
const deprecation = {
  Deprecation: '@1795132800',
  Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  Link: '</v1/pets>; rel="successor-version"',
};

describe('OpenApiResponseValidator', () => {
  let validator: OpenApiResponseValidator;
  const check =
    (method: string, path: string, status: number, body: unknown, headers: Record<string, string> = JSON_TYPE) =>
    () =>
      validator.validate(method, new URL(`http://127.0.0.1:1${path}`), {
        status,
        // Every response of the service says no-store, as every operation declares.
        headers: new Headers({ 'cache-control': 'no-store', ...headers }),
        text: typeof body === 'string' ? body : JSON.stringify(body),
      });

  beforeAll(async () => {
    const document = JSON.parse(
      await readFile(new URL('../../openapi.json', import.meta.url), 'utf8'),
    ) as OpenAPIObject;
    validator = new OpenApiResponseValidator(document);
  });

  it('accepts responses the document describes', () => {
    expect(check('GET', '/v1/pets?status=sold', 200, [pet])).not.toThrow();
    expect(check('POST', '/v1/pets', 201, pet)).not.toThrow();
    expect(check('GET', '/v1/pets/1', 200, pet, { ...JSON_TYPE, ...deprecation })).not.toThrow();
    expect(check('GET', '/v1/pets/1', 404, error(404))).not.toThrow();
    expect(check('HEAD', '/v1/pets', 200, '')).not.toThrow();
    expect(
      check('GET', '/v1/pets', 503, error(503, 'service_unavailable'), { ...JSON_TYPE, 'retry-after': '5' }),
    ).not.toThrow();
  });

  it('rejects a response without the Cache-Control every response declares', () => {
    const without = () =>
      validator.validate('GET', new URL('http://127.0.0.1:1/v1/pets'), {
        status: 200,
        headers: new Headers(JSON_TYPE),
        text: JSON.stringify([pet]),
      });
    expect(without).toThrow(/required header\(s\) missing: Cache-Control/);
  });

  it('rejects a status the operation does not declare', () => {
    expect(check('GET', '/v1/pets', 404, error(404))).toThrow(/status 404 is not declared for listPets/);
    expect(check('POST', '/v1/pets', 200, pet)).toThrow(/status 200 is not declared for createPet/);
  });

  it('rejects bodies that do not match the schema, including undocumented fields', () => {
    expect(check('GET', '/v1/pets', 200, [{ ...pet, id: '1' }])).toThrow(/\/0\/id must be integer/);
    expect(check('POST', '/v1/pets', 201, { ...pet, createdAt: 'now' })).toThrow(/must NOT have additional properties/);
    expect(check('GET', '/v1/pets', 200, [{ ...pet, status: 'lost' }])).toThrow(
      /must be equal to one of the allowed values/,
    );
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
    expect(check('GET', '/nowhere', 404, 'Not Found', { 'content-type': 'text/plain' })).toThrow(
      /not application\/json/,
    );
    expect(check('PUT', '/v1/pets', 405, { message: 'no' })).toThrow(/must have required property 'code'/);
  });

  it('rejects successes under /v1 that no operation describes, and leaves the docs routes alone', () => {
    expect(check('DELETE', '/v1/pets/1', 204, '')).toThrow(/no operation is documented/);
    expect(check('GET', '/docs', 200, '<html></html>', { 'content-type': 'text/html' })).not.toThrow();
  });

  const rateLimit = { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '599', 'x-ratelimit-reset': '60' };

  // Finding 4 of the OpenAPI strictness issue: the service sent X-RateLimit-* everywhere, the document nowhere.
  it('rejects a header the response carries but the document does not declare for it', () => {
    expect(check('GET', '/v1/pets', 200, [pet], { ...JSON_TYPE, ...rateLimit })).not.toThrow();
    expect(
      check('GET', '/v1/pets', 401, error(401, 'unauthorized'), {
        ...JSON_TYPE,
        'www-authenticate': 'Bearer realm="animal-store"',
        ...rateLimit,
      }),
    ).toThrow(
      /header\(s\) sent but not declared for this response: x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset/,
    );
    expect(check('GET', '/v1/pets', 200, [pet], { ...JSON_TYPE, 'x-powered-by': 'Nest' })).toThrow(
      /not declared.*x-powered-by/,
    );
    expect(
      check('GET', '/v1/pets', 200, [pet], {
        ...JSON_TYPE,
        'x-request-id': 'abc',
        'x-content-type-options': 'nosniff',
      }),
    ).not.toThrow();
  });

  it('rejects a declared header whose value breaks its schema', () => {
    expect(check('GET', '/v1/pets', 200, [pet], { ...JSON_TYPE, ...rateLimit, 'x-ratelimit-reset': '61' })).toThrow(
      /header X-RateLimit-Reset: "61" must be <= 60/,
    );
    expect(check('GET', '/v1/pets', 200, [pet], { ...JSON_TYPE, ...rateLimit, 'x-ratelimit-limit': 'lots' })).toThrow(
      /X-RateLimit-Limit/,
    );
  });

  // Finding 2: every response carried `status`, the document called it optional.
  it('refuses a document that calls a response field optional', async () => {
    const document = JSON.parse(
      await readFile(new URL('../../openapi.json', import.meta.url), 'utf8'),
    ) as OpenAPIObject;
    (document.components!.schemas!.Pet as { required: string[] }).required = ['id', 'name', 'categoryId'];
    expect(() => new OpenApiResponseValidator(document)).toThrow(/optional that every response carries: Pet\.status$/);
  });

  describe('with the request: a refusal for a reason the document does not state', () => {
    const refused = error(400, 'validation_failed');
    const send =
      (
        target: OpenApiResponseValidator,
        path: string,
        init: { body?: unknown; headers?: Record<string, string> },
        method = 'POST',
      ) =>
      () =>
        target.validate(
          method,
          new URL(`http://127.0.0.1:1${path}`),
          {
            status: 400,
            headers: new Headers({ ...JSON_TYPE, 'cache-control': 'no-store' }),
            text: JSON.stringify(refused),
          },
          {
            headers: new Headers({ 'content-type': 'application/json', ...init.headers }),
            body: init.body === undefined ? undefined : JSON.stringify(init.body),
          },
        );

    // Finding 1: the document left NewPet open, the service answered 400 `property colour should not exist.`
    it('fails when the document accepts the body', async () => {
      const document = JSON.parse(
        await readFile(new URL('../../openapi.json', import.meta.url), 'utf8'),
      ) as OpenAPIObject;
      delete (document.components!.schemas!.NewPet as { additionalProperties?: boolean }).additionalProperties;
      const open = new OpenApiResponseValidator(document);
      const body = { name: 'Rex', categoryId: 1, colour: 'brown' };
      expect(send(open, '/v1/pets', { body })).toThrow(/the document accepts this request, yet the service refused it/);
      expect(send(validator, '/v1/pets', { body })).not.toThrow();
    });

    it('passes refusals the document states, in its schemas or in words', () => {
      expect(send(validator, '/v1/pets', { body: { name: 'Rex' } })).not.toThrow();
      expect(send(validator, '/v1/pets', { body: { name: 'Rex\ud83d', categoryId: 1 } })).not.toThrow();
      expect(send(validator, '/v1/pets', { body: { name: '\u00a0', categoryId: 1 } })).not.toThrow();
      expect(
        send(validator, '/v1/pets', { body: { name: 'Rex', categoryId: 1 }, headers: { 'idempotency-key': 'é' } }),
      ).not.toThrow();
      expect(send(validator, '/v1/pets?limit=0', {}, 'GET')).not.toThrow();
      expect(send(validator, '/v1/pets?limit=1e2', {}, 'GET')).not.toThrow();
      expect(send(validator, '/v1/pets?limit=5&limit=6', {}, 'GET')).not.toThrow();
      expect(send(validator, '/v1/pets/0', {}, 'GET')).not.toThrow();
    });

    it('fails on a refusal of what the document accepts, in parameters, headers and body', () => {
      expect(send(validator, '/v1/pets', { body: { name: 'Rex 🐶', categoryId: 1 } })).toThrow(/document accepts/);
      expect(
        send(validator, '/v1/pets', {
          body: { name: 'Rex', categoryId: 1 },
          headers: { 'idempotency-key': 'order 42' },
        }),
      ).toThrow(/document accepts/);
      expect(send(validator, '/v1/pets?limit=100&status=sold', {}, 'GET')).toThrow(/document accepts/);
      expect(send(validator, '/v1/pets/9007199254740991', {}, 'GET')).toThrow(/document accepts/);
    });
  });
});
