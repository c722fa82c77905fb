import type { Pet } from '../src/pets/dto/pet.dto.js';
import { auth, jsonBody, request, startTestApp, TestApp } from './support/test-app.js';

// Responses are serialised from route schemas taken from the OpenAPI document (src/openapi/response-schemas.ts); bodies, status codes
// and error bodies must be exactly what the handlers and the error filter produce.
describe('response serialisation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers create, get and list with the stored animal, byte for byte', async () => {
    const created = await request<Pet>(
      t.origin,
      '/v1/pets',
      jsonBody({ name: 'Fé "Ω"', categoryId: 9007199254740991, status: 'sold' }),
    );
    expect(created.status).toBe(201);
    const expected = { id: created.body.id, name: 'Fé "Ω"', categoryId: 9007199254740991, status: 'sold' };
    expect(created.text).toBe(JSON.stringify(expected));
    expect(created.headers.get('content-type')).toBe('application/json; charset=utf-8');

    const fetched = await request(t.origin, `/v1/pets/${expected.id}`, { headers: auth() });
    expect(fetched.status).toBe(200);
    expect(fetched.text).toBe(JSON.stringify(expected));
    expect(fetched.headers.get('deprecation')).toMatch(/^@\d+$/);

    const list = await request(t.origin, '/v1/pets?status=sold', { headers: auth() });
    expect(list.text).toBe(JSON.stringify([expected]));
  });
});
