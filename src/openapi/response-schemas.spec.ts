import Fastify from 'fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { serializeResponsesWithDocumentSchemas, successResponseSchemas } from './response-schemas.js';

const DOCUMENT = {
  openapi: '3.0.0',
  info: { title: 't', version: '1' },
  paths: {
    '/things': {
      get: {
        responses: {
          200: {
            description: '',
            content: {
              'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Thing' } } },
            },
          },
          400: { description: '', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
        },
      },
    },
    '/things/{thingId}': {
      get: {
        responses: {
          200: { description: '', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
        },
      },
    },
  },
  components: {
    schemas: {
      Kind: { type: 'string', enum: ['a', 'b'] },
      Thing: {
        type: 'object',
        required: ['id'],
        properties: {
          id: { type: 'integer', format: 'int64' },
          name: { type: 'string' },
          kind: { allOf: [{ $ref: '#/components/schemas/Kind' }] },
        },
      },
    },
  },
} as unknown as OpenAPIObject;

describe('successResponseSchemas', () => {
  it('takes the 2xx JSON schemas by method and Fastify URL, with $refs inlined', () => {
    const schemas = successResponseSchemas(DOCUMENT, 'v1');
    expect([...schemas.keys()]).toEqual(['GET /v1/things', 'GET /v1/things/:thingId']);
    expect(Object.keys(schemas.get('GET /v1/things')!)).toEqual(['200']);
    expect(schemas.get('GET /v1/things/:thingId')!['200']).toEqual({
      type: 'object',
      required: ['id'],
      properties: {
        id: { type: 'integer', format: 'int64' },
        name: { type: 'string' },
        kind: { allOf: [{ type: 'string', enum: ['a', 'b'] }] },
      },
    });
  });
});

describe('serializeResponsesWithDocumentSchemas', () => {
  it('serialises with the document schema: exactly JSON.stringify for a whitelisted body, and no extra fields', async () => {
    const app = Fastify();
    await app.register(serializeResponsesWithDocumentSchemas, { document: DOCUMENT, prefix: 'v1' });
    const thing = { id: 9007199254740991, name: 'Fé "Ω" 🐕', kind: 'b' };
    app.get('/v1/things', () => Promise.resolve([thing, { ...thing, secret: 'never sent' }]));
    app.get('/v1/things/:thingId', () => Promise.resolve(thing));
    const origin = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      expect(await (await fetch(`${origin}/v1/things/1`)).text()).toBe(JSON.stringify(thing));
      expect(await (await fetch(`${origin}/v1/things`)).text()).toBe(JSON.stringify([thing, thing]));
    } finally {
      await app.close();
    }
  });
});
