import { request, startTestApp, TestApp, auth, jsonBody } from './support/test-app.js';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('creates and lists', async () => {
    const created = await request(t.origin, '/v1/pets', jsonBody({ name: 'Rex', categoryId: 2 }));
    expect(created.status).toBe(201);
    const list = await request(t.origin, '/v1/pets', { headers: auth() });
    expect(list.body).toEqual([{ id: created.body.id, name: 'Rex', categoryId: 2, status: 'available' }]);
  });
});
