// Written against the client @hey-api/openapi-ts generates from the served document (fetch client, SDK and zod
// schemas, in ./client next to this file, produced by generated-client.e2e-spec.ts). The SDK validates every
// request and response with the generated zod schemas.
import { client } from './client/client.gen.js';
import { createPet, getPet, listPets } from './client/sdk.gen.js';
import type { Pet } from './client/types.gen.js';
import { zError, zNewPet, zPet } from './client/zod.gen.js';

/** The query of the `Link: <...>; rel="next"` target, or undefined on the last page. */
function nextPageQuery(link: string | null): Record<string, string> | undefined {
  const target = link?.match(/^<([^>]+)>;\s*rel="next"$/)?.[1];
  return target === undefined ? undefined : Object.fromEntries(new URL(target, 'http://relative.invalid').searchParams);
}

export async function runPetsScenario(baseUrl: string, apiKey: string) {
  // The generated client points at the document's first server, a placeholder: this is the one line to change.
  client.setConfig({ baseUrl, auth: apiKey });

  const newPet = { name: 'Rex 🐶', categoryId: 7, status: 'pending' as const };
  const requestChecked = zNewPet.safeParse(newPet).success;
  const created = await createPet({ body: newPet });
  if (!created.data) throw new Error(`createPet answered ${created.response.status}`);
  const responseChecked = zPet.safeParse(created.data).success;

  // zod coerces int64 to bigint, which JSON.stringify cannot write; the SDK only checks, so its data keeps numbers.
  const parsed = zPet.parse(created.data);
  let stringifyError = '';
  try {
    JSON.stringify(parsed);
  } catch (error) {
    stringifyError = (error as Error).name;
  }
  // The remedy docs/clients.md gives: ids are at most 2^53-1, so Number() is exact.
  const asJson = JSON.stringify(parsed, (_key, value: unknown) => (typeof value === 'bigint' ? Number(value) : value));

  for (let index = 0; index < 4; index += 1)
    await createPet({ body: { name: `Page ${index}`, categoryId: 7, status: 'sold' } });
  const paged: Pet[] = [];
  let query: Record<string, string> | undefined = { status: 'sold', limit: '2' };
  let pages = 0;
  for (; query !== undefined && pages < 10; pages += 1) {
    const page = await listPets({ query: { status: 'sold', limit: Number(query.limit), cursor: query.cursor } });
    if (!page.data) throw new Error(`listPets answered ${page.response.status}`);
    paged.push(...page.data);
    query = nextPageQuery(page.response.headers.get('link'));
  }

  const fetched = await getPet({ path: { petId: created.data.id } });
  const missing = await getPet({ path: { petId: Number.MAX_SAFE_INTEGER } });

  return {
    created: { status: created.response.status, pet: created.data, requestChecked, responseChecked },
    ids: { parsedType: typeof parsed.id, stringifyError, asJson, dataType: typeof created.data.id },
    paged: { pages, names: paged.map((pet) => pet.name) },
    fetched: {
      status: fetched.response.status,
      pet: fetched.data,
      deprecation: fetched.response.headers.get('deprecation'),
      sunset: fetched.response.headers.get('sunset'),
    },
    missing: {
      status: missing.response.status,
      error: missing.error,
      errorChecked: zError.safeParse(missing.error).success,
    },
  };
}

/** Whether the generated client's own validation would let `name` through in a NewPet. */
export function clientAcceptsName(name: string): boolean {
  return zNewPet.safeParse({ name, categoryId: 1 }).success;
}
