import { auth, jsonBody, request } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('X-Request-Id', () => {
  const t = testAppPerBlock();

  it("echoes a sane client's id, and gives every other response, errors included, one of its own", async () => {
    const echoed = await request(t.origin, '/v1/pets', { headers: { ...auth(), 'x-request-id': 'order-flow:42.1' } });
    expect([echoed.status, echoed.headers.get('x-request-id')]).toEqual([200, 'order-flow:42.1']);

    const responses = await Promise.all([
      request(t.origin, '/v1/pets'), // 401 from the guard
      request(t.origin, '/v1/pets/abc', { headers: auth() }), // 400 from validation
      request(t.origin, '/v1/nowhere', { headers: auth() }), // 404 from the router
      request(t.origin, '/v1/pets', { ...jsonBody('{"name":'), headers: jsonBody({}).headers }), // 400 from the parser
      request(t.origin, '/v1/pets/%E0%A4%A', { headers: auth() }), // malformed URL, a Fastify framework error
      request(t.origin, '/health/live'),
    ]);
    expect(responses.map((response) => response.status)).toEqual([401, 400, 404, 400, 400, 200]);
    const ids = responses.map((response) => response.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
