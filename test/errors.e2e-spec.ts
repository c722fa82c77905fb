import { exchange, rawRequest } from './support/raw-http.js';
import { ApiResponse, auth, request, startTestApp, TEST_KEY, TestApp } from './support/test-app.js';

/** Every error leaves as exactly { code, message, status } in JSON, with no stack or internals. */
function expectError(response: ApiResponse | undefined, status: number, code: string, message: string) {
  expect(response?.status).toBe(status);
  expect(response!.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(response!.body).toEqual({ code, message, status });
  expect(Object.keys(response!.body as object).sort()).toEqual(['code', 'message', 'status']);
  expect(response!.text).not.toMatch(/stack|\bat .*\.(js|ts):\d+|FST_ERR|SELECT|node_modules/);
}

const PET = '{"name":"Rex","categoryId":1}';

describe('errors (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const countPets = async () =>
    Number((await t.sql.query<{ count: string }>('SELECT count(*) FROM pets')).rows[0].count);

  const post = (body: string | Uint8Array | undefined, headers: Record<string, string> = {}) =>
    request(t.origin, '/v1/pets', { method: 'POST', headers: { ...auth(), ...headers }, body });
  const postJson = (body: string | Uint8Array) => post(body, { 'content-type': 'application/json' });

  /** fetch() normalises URLs and refuses some requests: these are sent as they are written. */
  const rawGet = (path: string, headers: [string, string][] = []) =>
    exchange(
      t.origin,
      rawRequest('GET', path, [['Host', new URL(t.origin).host], ['Authorization', `Bearer ${TEST_KEY}`], ...headers]),
    );

  describe('request bodies', () => {
    afterEach(async () => {
      expect(await countPets()).toBe(0);
    });

    it.each([
      ['truncated JSON', '{"name":'],
      ['single quotes', "{'name':'Rex','categoryId':1}"],
      ['__proto__ (prototype poisoning)', '{"name":"Rex","categoryId":1,"__proto__":{"status":"sold"}}'],
      [
        'constructor.prototype (prototype poisoning)',
        '{"name":"Rex","categoryId":1,"constructor":{"prototype":{"status":"sold"}}}',
      ],
    ])('answers %s with 400 invalid_json', async (_case, body) => {
      expectError(await postJson(body), 400, 'invalid_json', 'The request body is not valid JSON.');
    });

    it('answers an empty JSON body with 400 invalid_json', async () => {
      expectError(await postJson(''), 400, 'invalid_json', 'The request body is empty.');
    });

    it('answers a missing body with 400 naming the required fields', async () => {
      expectError(
        await post(undefined),
        400,
        'validation_failed',
        'name must be a string of 1 to 255 characters, not only whitespace, without control characters; ' +
          'categoryId must be an integer from 1 to 9007199254740991.',
      );
    });

    // The charsets were found by contract fuzzing: such bodies were read as UTF-8, the name stored with U+FFFD.
    it.each([
      ['text/plain', PET],
      ['text/plain; charset=utf-8', PET],
      ['text/json', PET],
      ['application/jsonx', PET],
      ['application/json-patch+json', PET],
      ['application/x-www-form-urlencoded', 'name=Rex&categoryId=1'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nRex\r\n--x--'],
      ['application/xml', '<pet><name>Rex</name></pet>'],
      ['application/octet-stream', 'Rex'],
      ['application/json; charset=utf-16', PET, ' in UTF-8'],
      ['application/json; charset=iso-8859-1', PET, ' in UTF-8'],
      ['application/json; charset="latin1"', PET, ' in UTF-8'],
    ])('answers a %s body with 415', async (contentType, body, inUtf8 = '') => {
      expectError(
        await post(body, { 'content-type': contentType }),
        415,
        'unsupported_media_type',
        `The request body must be application/json${inUtf8}.`,
      );
    });

    it.each([
      ['an invalid byte', [0xff]],
      ['a truncated sequence', [0xc3]],
      ['an encoded lone surrogate', [0xed, 0xa0, 0xbd]],
      ['an overlong encoding', [0xc0, 0xaf]],
    ])('answers a body with %s (not UTF-8) with 400 invalid_json', async (_case, bytes) => {
      const body = Buffer.concat([Buffer.from('{"name":"Re'), Buffer.from(bytes), Buffer.from('x","categoryId":1}')]);

      expectError(await postJson(body), 400, 'invalid_json', 'The request body is not valid UTF-8.');
    });

    it('answers a body over 16 KiB with 413', async () => {
      const body = JSON.stringify({ name: 'x'.repeat(16 * 1024), categoryId: 1 });

      expectError(await postJson(body), 413, 'payload_too_large', 'The request body is larger than 16 KiB.');
    });

    it('reads a body of exactly 16 KiB (then rejects the over-long name with 400)', async () => {
      const envelope = JSON.stringify({ name: '', categoryId: 1 });
      const body = JSON.stringify({ name: 'x'.repeat(16 * 1024 - envelope.length), categoryId: 1 });
      expect(Buffer.byteLength(body)).toBe(16 * 1024);

      const response = await postJson(body);

      expect(response.status).toBe(400);
      expect((response.body as { code: string }).code).toBe('validation_failed');
    });
  });

  it.each([['utf-8'], ['UTF-8'], ['"utf-8"'], ['utf8']])(
    'accepts application/json with charset=%s',
    async (charset) => {
      const response = await post(JSON.stringify({ name: 'Bébé 🐶', categoryId: 1 }), {
        'content-type': `application/json; charset=${charset}`,
      });

      expect(response.status).toBe(201);
      expect((response.body as { name: string }).name).toBe('Bébé 🐶');
      await t.sql.query('TRUNCATE pets RESTART IDENTITY');
    },
  );

  describe('routing', () => {
    // QUERY as fetch sends it, without a Content-Type.
    it.each([
      ['GET', '/v1/animals'],
      ['GET', '/v1'],
      ['GET', '/'],
      ['GET', '/v2/pets'],
      ['GET', '/v1/pets/1/owner'],
      ['GET', '/pets'],
      ['GET', '/v1/pets/'],
      ['GET', '/v1//pets'],
      ['GET', '/v1/docs-json'],
      ['QUERY', '/v1/animals'],
    ])('answers %s %s, an unknown path, with 404 with or without a key, without echoing it', async (method, path) => {
      for (const headers of [auth(), {}]) {
        const response = await request(t.origin, path, { method, headers });

        expectError(response, 404, 'not_found', 'No resource exists at this path.');
        expect(response.text).not.toContain(`Cannot ${method}`);
      }
    });

    it.each([
      ['/v1/pets', 'GET, HEAD, POST', ['DELETE', 'PUT', 'PATCH', 'OPTIONS', 'QUERY']],
      ['/v1/pets/1', 'GET, HEAD', ['DELETE', 'PUT', 'PATCH', 'POST', 'OPTIONS', 'QUERY']],
      ['/docs-json', 'GET, HEAD', ['POST']],
    ])('answers any other method on %s with 405 and Allow: %s, with or without a key', async (path, allow, methods) => {
      for (const method of methods) {
        for (const headers of [auth(), {}]) {
          const response = await request(t.origin, path, { method, headers });

          expectError(response, 405, 'method_not_allowed', `${method} is not allowed on this path.`);
          expect(response.headers.get('allow')).toBe(allow);
        }
      }
    });

    it('answers a malformed percent-encoding in the URL with 400, without echoing the URL', async () => {
      const response = await rawGet('/v1/pets/%E0%A4%A');

      expectError(response, 400, 'validation_failed', 'The request URL is malformed.');
      expect(response!.text).not.toContain('%E0');
    });

    // Found by contract fuzzing: Node refuses these before Fastify routes them, and the answer was Fastify's own
    // body ({ error, message, statusCode }) with status 431, which no operation declares.
    it.each<[string, string, [string, string][]]>([
      ['a 20 kB query string', '/v1/pets?name=' + 'x'.repeat(20 * 1024), []],
      ['a 20 kB header', '/v1/pets', [['X-Padding', 'x'.repeat(20 * 1024)]]],
    ])('answers a request with %s with a 400 Error body', async (_case, path, headers) => {
      const response = await rawGet(path, headers);

      expectError(response, 400, 'validation_failed', 'The request line or headers are larger than allowed.');
      expect(response!.headers.get('connection')).toBe('close');
    });
  });
});
