import Fastify from 'fastify';
import { PET_LIST_RESPONSE_SCHEMA, PET_RESPONSE_SCHEMA } from './pet-response.schema.js';
import { toPet } from './pet.mapper.js';
import { PetStatus } from './pet-status.enum.js';

const row = { id: '9007199254740991', name: 'Rex "the dog" \u00e9\u{1f415}', category_id: '3', status: PetStatus.Sold };

describe('Pet response schemas', () => {
  it('name exactly the fields toPet returns', () => {
    expect(Object.keys(PET_RESPONSE_SCHEMA.properties).sort()).toEqual(Object.keys(toPet(row)).sort());
    expect([...PET_RESPONSE_SCHEMA.required].sort()).toEqual(Object.keys(toPet(row)).sort());
  });

  it('serialise a pet and a list exactly as JSON.stringify does', async () => {
    const app = Fastify();
    app.get('/one', { schema: { response: { 200: PET_RESPONSE_SCHEMA } } }, async () => toPet(row));
    app.get('/list', { schema: { response: { 200: PET_LIST_RESPONSE_SCHEMA } } }, async () => [toPet(row), toPet(row)]);
    const origin = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      expect(await (await fetch(`${origin}/one`)).text()).toBe(JSON.stringify(toPet(row)));
      expect(await (await fetch(`${origin}/list`)).text()).toBe(JSON.stringify([toPet(row), toPet(row)]));
    } finally {
      await app.close();
    }
  });
});
