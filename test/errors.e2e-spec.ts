import { request as httpRequest } from 'node:http';
import { ApiResponse, auth, request, startTestApp, TestApp } from './support/test-app.js';

/** Every error leaves as exactly { code, message, status } in JSON, with no stack or internals. */
function expectError(response: ApiResponse, status: number, code: string, message: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(response.body).toEqual({ code, message, status });
  expect(Object.keys(response.body as object).sort()).toEqual(['code', 'message', 'status']);
  expect(response.text).not.toMatch(/stack|\bat .*\.(js|ts):\d+|FST_ERR|SELECT|node_modules/);
}

/**
 * fetch() normalises URLs, so a malformed one is sent with node:http as is.
 */
function rawGet(origin: string, path: string, headers: Record<string, string>): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(origin);
    const req = httpRequest(
      { agent: false, host: url.hostname, port: url.port, path, method: 'GET', headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === 'string') responseHeaders.set(name, value);
          }
          resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: JSON.parse(text), text });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

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

  describe('request bodies', () => {
    afterEach(async () => {
      expect(await countPets()).toBe(0);
    });

    it.each([
      ['truncated JSON', '{"name":'],
      ['a trailing comma', '{"name":"Rex","categoryId":1,}'],
      ['single quotes', "{'name':'Rex','categoryId':1}"],
      ['a bare word', 'Rex'],
    ])('answers %s with 400 invalid_json', async (_case, body) => {
      expectError(
        await post(body, { 'content-type': 'application/json' }),
        400,
        'invalid_json',
        'The request body is not valid JSON.',
      );
    });

    it.each([
      ['__proto__', '{"name":"Rex","categoryId":1,"__proto__":{"status":"sold"}}'],
      ['constructor.prototype', '{"name":"Rex","categoryId":1,"constructor":{"prototype":{"status":"sold"}}}'],
    ])('answers a body with %s (prototype poisoning) with 400 invalid_json', async (_case, body) => {
      expectError(
        await post(body, { 'content-type': 'application/json' }),
        400,
        'invalid_json',
        'The request body is not valid JSON.',
      );
    });

    it('answers an empty JSON body with 400 invalid_json', async () => {
      expectError(
        await post('', { 'content-type': 'application/json' }),
        400,
        'invalid_json',
        'The request body is empty.',
      );
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

    it.each([
      ['text/plain', '{"name":"Rex","categoryId":1}'],
      ['text/plain; charset=utf-8', '{"name":"Rex","categoryId":1}'],
      ['application/x-www-form-urlencoded', 'name=Rex&categoryId=1'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nRex\r\n--x--'],
      ['application/xml', '<pet><name>Rex</name></pet>'],
      ['application/octet-stream', 'Rex'],
    ])('answers a %s body with 415', async (contentType, body) => {
      expectError(
        await post(body, { 'content-type': contentType }),
        415,
        'unsupported_media_type',
        'The request body must be application/json.',
      );
    });

    // Found by contract fuzzing: such bodies were read as UTF-8 regardless, and the name stored with U+FFFD.
    it.each([['utf-16'], ['iso-8859-1'], ['"latin1"']])(
      'answers a JSON body declared as charset=%s with 415',
      async (charset) => {
        expectError(
          await post(JSON.stringify({ name: 'Rex', categoryId: 1 }), {
            'content-type': `application/json; charset=${charset}`,
          }),
          415,
          'unsupported_media_type',
          'The request body must be application/json in UTF-8.',
        );
      },
    );

    it.each([
      ['an invalid byte', [0xff]],
      ['a truncated sequence', [0xc3]],
      ['an encoded lone surrogate', [0xed, 0xa0, 0xbd]],
      ['an overlong encoding', [0xc0, 0xaf]],
    ])('answers a body with %s (not UTF-8) with 400 invalid_json', async (_case, bytes) => {
      const body = Buffer.concat([Buffer.from('{"name":"Re'), Buffer.from(bytes), Buffer.from('x","categoryId":1}')]);

      expectError(
        await post(body, { 'content-type': 'application/json' }),
        400,
        'invalid_json',
        'The request body is not valid UTF-8.',
      );
    });

    it('answers a body over 16 KiB with 413', async () => {
      const body = JSON.stringify({ name: 'x'.repeat(16 * 1024), categoryId: 1 });

      expectError(
        await post(body, { 'content-type': 'application/json' }),
        413,
        'payload_too_large',
        'The request body is larger than 16 KiB.',
      );
    });

    it('reads a body of exactly 16 KiB (then rejects the over-long name with 400)', async () => {
      const envelope = JSON.stringify({ name: '', categoryId: 1 });
      const body = JSON.stringify({ name: 'x'.repeat(16 * 1024 - envelope.length), categoryId: 1 });
      expect(Buffer.byteLength(body)).toBe(16 * 1024);

      const response = await post(body, { 'content-type': 'application/json' });

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
    it.each([
      ['/v1/animals'],
      ['/v1'],
      ['/'],
      ['/v2/pets'],
      ['/v1/pets/1/owner'],
      ['/pets'],
      ['/v1/pets/'],
      ['/v1//pets'],
    ])('answers the unknown path %s with 404, without echoing it', async (path) => {
      const response = await request(t.origin, path, { headers: auth() });

      expectError(response, 404, 'not_found', 'No resource exists at this path.');
      expect(response.text).not.toContain('Cannot GET');
    });

    it('answers an unknown path with 404 even without a key', async () => {
      expectError(await request(t.origin, '/v1/animals'), 404, 'not_found', 'No resource exists at this path.');
    });

    it.each([['DELETE'], ['PUT'], ['PATCH'], ['OPTIONS']])('answers %s /v1/pets with 405 and Allow', async (method) => {
      const response = await request(t.origin, '/v1/pets', { method, headers: auth() });

      expectError(response, 405, 'method_not_allowed', `${method} is not allowed on this path.`);
      expect(response.headers.get('allow')).toBe('GET, HEAD, POST');
    });

    it.each([['DELETE'], ['PUT'], ['POST']])('answers %s /v1/pets/1 with 405 and Allow', async (method) => {
      const response = await request(t.origin, '/v1/pets/1', { method, headers: auth() });

      expectError(response, 405, 'method_not_allowed', `${method} is not allowed on this path.`);
      expect(response.headers.get('allow')).toBe('GET, HEAD');
    });

    it.each([
      ['/v1/pets', 'GET, HEAD, POST'],
      ['/v1/pets/1', 'GET, HEAD'],
    ])(
      'answers QUERY %s without a Content-Type with 405 and Allow, as any method the path lacks',
      async (path, allow) => {
        for (const headers of [auth(), {}]) {
          const response = await request(t.origin, path, { method: 'QUERY', headers });

          expectError(response, 405, 'method_not_allowed', 'QUERY is not allowed on this path.');
          expect(response.headers.get('allow')).toBe(allow);
        }
      },
    );

    it('answers QUERY on an unknown path without a Content-Type with 404', async () => {
      const response = await request(t.origin, '/v1/animals', { method: 'QUERY', headers: auth() });

      expectError(response, 404, 'not_found', 'No resource exists at this path.');
    });

    it('answers a malformed percent-encoding in the URL with 400, without echoing the URL', async () => {
      const response = await rawGet(t.origin, '/v1/pets/%E0%A4%A', auth());

      expectError(response, 400, 'validation_failed', 'The request URL is malformed.');
      expect(response.text).not.toContain('%E0');
    });

    // Found by contract fuzzing: Node refuses these before Fastify routes them, and the answer was Fastify's own
    // body ({ error, message, statusCode }) with status 431, which no operation declares.
    it.each([
      ['a 20 kB query string', '/v1/pets?name=' + 'x'.repeat(20 * 1024), {}],
      ['a 20 kB header', '/v1/pets', { 'x-padding': 'x'.repeat(20 * 1024) }],
    ])('answers a request with %s with a 400 Error body', async (_case, path, headers) => {
      const response = await rawGet(t.origin, path, { ...auth(), ...headers });

      expectError(response, 400, 'validation_failed', 'The request line or headers are larger than allowed.');
      expect(response.headers.get('connection')).toBe('close');
    });
  });
});
