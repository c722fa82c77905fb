import { expect } from '@jest/globals';
import { parseApiKeys } from '../src/config/app-config.js';
import type { Pet } from '../src/pets/dto/pet.dto.js';
import { exchange, rawRequest } from './support/raw-http.js';
import { jsonBody, request, TEST_KEY } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

const OTHER_KEY = 'other-key-0123456789abcdef';

const keyed = (idempotencyKey: string, body: unknown, key = TEST_KEY): RequestInit => {
  const init = jsonBody(body, key);
  return { ...init, headers: { ...(init.headers as Record<string, string>), 'idempotency-key': idempotencyKey } };
};

describe('Idempotency-Key on POST /v1/pets', () => {
  const t = testAppPerBlock({ apiKeys: parseApiKeys(`${TEST_KEY},${OTHER_KEY}`) });

  const post = (init: RequestInit) => request<Pet>(t.origin, '/v1/pets', init);
  const countByName = async (name: string) =>
    Number((await t.sql.query<{ count: string }>('SELECT count(*) FROM pets WHERE name = $1', [name])).rows[0].count);

  it('replays the first 201 and its body for the same key and body, creating nothing; a different body is 422', async () => {
    const first = await post(keyed('replay-1', { name: 'Replay', categoryId: 4 }));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    // Same body with its keys in another order is the same request.
    const again = await post(keyed('replay-1', { categoryId: 4, name: 'Replay' }));
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await countByName('Replay')).toBe(1);

    const reused = await post(keyed('replay-1', { name: 'Second', categoryId: 4 }));
    expect(reused.status).toBe(422);
    expect(reused.body).toEqual({ code: 'idempotency_key_reused', message: expect.any(String), status: 422 });
    expect(await countByName('Second')).toBe(0);
  });

  it('creates exactly one animal for 50 concurrent identical requests with one key', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => post(keyed('burst-1', { name: 'Burst', categoryId: 9 }))),
    );
    const created = responses.filter((response) => response.status === 201);
    // A request that waited too long for the first one's transaction may get 409 instead.
    for (const response of responses.filter((r) => r.status !== 201)) {
      expect(response.status).toBe(409);
      expect(response.body).toMatchObject({ code: 'idempotency_key_in_use' });
    }
    expect(created.length).toBeGreaterThan(0);
    expect(new Set(created.map((response) => response.body.id)).size).toBe(1);
    expect(await countByName('Burst')).toBe(1);
  });

  it('keeps the keys of different API keys apart', async () => {
    const mine = await post(keyed('shared-1', { name: 'Mine', categoryId: 2 }));
    const theirs = await post(keyed('shared-1', { name: 'Theirs', categoryId: 2 }, OTHER_KEY));
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  // fetch refuses some header bytes itself: a raw request puts them on the wire (in UTF-8) as a client could.
  it('rejects a non-ASCII key with 400 and creates nothing', async () => {
    const headers: [string, string][] = [
      ['Host', new URL(t.origin).host],
      ['Authorization', `Bearer ${TEST_KEY}`],
      ['Content-Type', 'application/json'],
      ['Idempotency-Key', 'clé-1'],
    ];
    const body = '{"name":"Invalid","categoryId":1}';
    const response = await exchange(t.origin, rawRequest('POST', '/v1/pets', headers, body));
    expect({ status: response?.status, body: response?.body }).toEqual({
      status: 400,
      body: { code: 'validation_failed', message: expect.stringMatching(/Idempotency-Key/), status: 400 },
    });
    expect(await countByName('Invalid')).toBe(0);
  });

  it('leaves the create without a key as it was: one row per request', async () => {
    const keys = async () =>
      Number((await t.sql.query<{ count: string }>('SELECT count(*) FROM idempotency_keys')).rows[0].count);
    const keysBefore = await keys();
    const body = { name: 'Unkeyed', categoryId: 5 };
    await post(jsonBody(body));
    await post(jsonBody(body));
    expect(await countByName('Unkeyed')).toBe(2);
    expect(await keys()).toBe(keysBefore);
  });
});
