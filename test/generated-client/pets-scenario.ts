// Written against the types openapi-typescript generates from the served document
// (`animal-store-api.d.ts`, produced next to this file by generated-client.e2e-spec.ts).
import createClient from 'openapi-fetch';
import type { paths } from './animal-store-api.js';

export async function runPetsScenario(baseUrl: string, apiKey: string, readOnlyKey: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

  const created = await client.POST('/pets', { body: { name: 'Generated', categoryId: 7, status: 'pending' } });
  if (!created.data) throw new Error(`createPet answered ${created.response.status}`);
  const id: number = created.data.id;

  const listed = await client.GET('/pets', { params: { query: { status: 'pending', limit: 10 } } });
  const fetched = await client.GET('/pets/{petId}', { params: { path: { petId: id } } });
  const unauthorized = await createClient<paths>({ baseUrl }).GET('/pets');
  const badRequest = await client.GET('/pets', { params: { query: { limit: 0 } } });
  const readOnly = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${readOnlyKey}` } });
  const forbidden = await readOnly.POST('/pets', { body: { name: 'Refused', categoryId: 7, status: 'available' } });

  return {
    created: { status: created.response.status, pet: created.data },
    listed: { status: listed.response.status, pets: listed.data },
    fetched: { status: fetched.response.status, pet: fetched.data, sunset: fetched.response.headers.get('sunset') },
    unauthorized: { status: unauthorized.response.status, code: unauthorized.error?.code },
    badRequest: { status: badRequest.response.status, code: badRequest.error?.code },
    forbidden: {
      status: forbidden.response.status,
      code: forbidden.error?.code,
      challenge: forbidden.response.headers.get('www-authenticate'),
    },
  };
}

/** Never run: proves the generated types are precise enough for tsc to reject wrong calls. */
export function callsTheTypesReject(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error status is a PetStatus
  void client.GET('/pets', { params: { query: { status: 'lost' } } });
  // @ts-expect-error name is required in NewPet
  void client.POST('/pets', { body: { categoryId: 1 } });
  // @ts-expect-error there is no /v1 prefix: paths are relative to the servers
  void client.GET('/v1/pets');
}
