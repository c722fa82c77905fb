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
const rateLimit = { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '599', 'x-ratelimit-reset': '60' };
const challenge = { 'www-authenticate': 'Bearer realm="animal-store"' };
const served = async () =>
  JSON.parse(await readFile(new URL('../../openapi.json', import.meta.url), 'utf8')) as OpenAPIObject;

/** [method, path, status, body, headers beside Cache-Control: no-store (undefined drops one)] */
type Answer = [string, string, number, unknown, Record<string, string | undefined>];
const limits = (headers: Record<string, string>) => ({ ...JSON_TYPE, ...rateLimit, ...headers });
const UNDECLARED_RATE_LIMIT =
  /not declared for this response: x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset/;
const RESET_PAST_WINDOW = /header X-RateLimit-Reset: "61" must be <= 60/;

describe('OpenApiResponseValidator', () => {
  let validator: OpenApiResponseValidator;

  beforeAll(async () => {
    validator = new OpenApiResponseValidator(await served());
  });

  const url = (path: string) => new URL(`http://127.0.0.1:1${path}`);
  const answer = (status: number, body: unknown, headers: Answer[4]) => ({
    status,
    headers: new Headers(
      Object.entries({ 'cache-control': 'no-store', ...headers }).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    ),
    text: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const check = (method: string, path: string, status: number, body: unknown, headers: Answer[4]) => () =>
    validator.validate(method, url(path), answer(status, body, headers));

  it.each<Answer>([
    ['GET', '/v1/pets?status=sold', 200, [pet], JSON_TYPE],
    ['POST', '/v1/pets', 201, pet, JSON_TYPE],
    ['GET', '/v1/pets/1', 200, pet, { ...JSON_TYPE, ...deprecation }],
    ['GET', '/v1/pets/1', 404, error(404), JSON_TYPE],
    ['HEAD', '/v1/pets', 200, '', JSON_TYPE],
    ['GET', '/v1/pets', 503, error(503, 'service_unavailable'), { ...JSON_TYPE, 'retry-after': '5' }],
    // Headers of every response (the request id, the security headers) and the declared rate-limit ones.
    ['GET', '/v1/pets', 200, [pet], { ...JSON_TYPE, 'x-request-id': 'a', 'x-content-type-options': 'nosniff' }],
    ['GET', '/v1/pets', 200, [pet], limits({})],
    // A request no operation describes is answered with an Error; the docs routes outside /v1 are left alone.
    ['PUT', '/v1/pets', 405, error(405, 'method_not_allowed'), JSON_TYPE],
    ['GET', '/nowhere', 404, error(404), JSON_TYPE],
    ['GET', '/v1/pets/', 404, error(404), JSON_TYPE],
    ['GET', '/docs', 200, '<html></html>', { 'content-type': 'text/html' }],
  ])('accepts %s %s answered %i: %j', (method, path, status, body, headers) => {
    expect(check(method, path, status, body, headers)).not.toThrow();
  });

  it.each<[...Answer, RegExp]>([
    ['GET', '/v1/pets', 200, [pet], { ...JSON_TYPE, 'cache-control': undefined }, /missing: Cache-Control/],
    ['GET', '/v1/pets', 404, error(404), JSON_TYPE, /status 404 is not declared for listPets/],
    ['POST', '/v1/pets', 200, pet, JSON_TYPE, /status 200 is not declared for createPet/],
    ['GET', '/v1/pets', 200, [{ ...pet, id: '1' }], JSON_TYPE, /\/0\/id must be integer/],
    ['POST', '/v1/pets', 201, { ...pet, createdAt: 'now' }, JSON_TYPE, /must NOT have additional properties/],
    ['GET', '/v1/pets', 200, [{ ...pet, status: 'lost' }], JSON_TYPE, /must be equal to one of the allowed values/],
    ['POST', '/v1/pets', 400, { code: 'oops', message: 'x', status: 400 }, JSON_TYPE, /\/code/],
    ['POST', '/v1/pets', 400, error(422, 'validation_failed'), JSON_TYPE, /status differs/],
    ['GET', '/v1/pets', 200, [pet], { 'content-type': 'text/plain' }, /not application\/json/],
    ['GET', '/v1/pets/1', 200, pet, JSON_TYPE, /missing: Deprecation, Sunset, Link/],
    ['GET', '/v1/pets', 503, error(503, 'service_unavailable'), JSON_TYPE, /Retry-After/],
    ['GET', '/v1/pets', 401, error(401, 'unauthorized'), JSON_TYPE, /WWW-Authenticate/],
    ['GET', '/nowhere', 404, 'Not Found', { 'content-type': 'text/plain' }, /not application\/json/],
    ['PUT', '/v1/pets', 405, { message: 'no' }, JSON_TYPE, /must have required property 'code'/],
    ['DELETE', '/v1/pets/1', 204, '', JSON_TYPE, /no operation is documented/],
    // Finding 4 of the OpenAPI strictness issue: the service sent X-RateLimit-* everywhere, the document nowhere.
    ['GET', '/v1/pets', 401, error(401, 'unauthorized'), limits(challenge), UNDECLARED_RATE_LIMIT],
    ['GET', '/v1/pets', 200, [pet], { ...JSON_TYPE, 'x-powered-by': 'Nest' }, /not declared.*x-powered-by/],
    ['GET', '/v1/pets', 200, [pet], limits({ 'x-ratelimit-reset': '61' }), RESET_PAST_WINDOW],
    ['GET', '/v1/pets', 200, [pet], limits({ 'x-ratelimit-limit': 'lots' }), /X-RateLimit-Limit/],
  ])('refuses %s %s answered %i: %j', (method, path, status, body, headers, expected) => {
    expect(check(method, path, status, body, headers)).toThrow(expected);
  });

  describe('with the request: a refusal for a reason the document does not state', () => {
    const send =
      (target: OpenApiResponseValidator, method: string, path: string, body?: unknown, headers = {}) =>
      () =>
        target.validate(method, url(path), answer(400, error(400, 'validation_failed'), JSON_TYPE), {
          headers: new Headers({ 'content-type': 'application/json', ...headers }),
          body: body === undefined ? undefined : JSON.stringify(body),
        });

    // Finding 1: the document left NewPet open, the service answered 400 `property colour should not exist.`
    it('fails when the document accepts the body', async () => {
      const document = await served();
      delete (document.components!.schemas!.NewPet as { additionalProperties?: boolean }).additionalProperties;
      const body = { name: 'Rex', categoryId: 1, colour: 'brown' };
      expect(send(new OpenApiResponseValidator(document), 'POST', '/v1/pets', body)).toThrow(
        /the document accepts this request, yet the service refused it/,
      );
      expect(send(validator, 'POST', '/v1/pets', body)).not.toThrow();
    });

    // Refusals the document states, in its schemas or in words, pass; a refusal of what it accepts fails.
    it.each<[string, string, unknown, Record<string, string>, boolean]>([
      ['POST', '/v1/pets', { name: 'Rex' }, {}, true],
      ['POST', '/v1/pets', { name: 'Rex\ud83d', categoryId: 1 }, {}, true],
      ['POST', '/v1/pets', { name: '\u00a0', categoryId: 1 }, {}, true],
      ['POST', '/v1/pets', { name: 'Rex', categoryId: 1 }, { 'idempotency-key': 'é' }, true],
      ['GET', '/v1/pets?limit=0', undefined, {}, true],
      ['GET', '/v1/pets?limit=1e2', undefined, {}, true],
      ['GET', '/v1/pets?limit=5&limit=6', undefined, {}, true],
      ['GET', '/v1/pets/0', undefined, {}, true],
      ['POST', '/v1/pets', { name: 'Rex 🐶', categoryId: 1 }, {}, false],
      ['POST', '/v1/pets', { name: 'Rex', categoryId: 1 }, { 'idempotency-key': 'order 42' }, false],
      ['GET', '/v1/pets?limit=100&status=sold', undefined, {}, false],
      ['GET', '/v1/pets/9007199254740991', undefined, {}, false],
    ])('%s %s %j %j: stated %s', (method, path, body, headers, stated) => {
      const check = send(validator, method, path, body, headers);
      if (stated) expect(check).not.toThrow();
      else expect(check).toThrow(/document accepts/);
    });
  });
});
