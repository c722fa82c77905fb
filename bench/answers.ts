/**
 * Before any load: every server must answer the benchmarked requests as the API does (status, JSON body of the
 * right shape, the same animals as the service), so that no server is measured while it answers something else.
 */
import { isDeepStrictEqual } from 'node:util';
import { NEW_PET, requestHeaders, Route } from './load.js';
import { PET_STATUSES } from './yardstick-pets.js';

const PET_KEYS = ['categoryId', 'id', 'name', 'status'];

interface Answer {
  status: number;
  contentType: string;
  body: unknown;
}

async function ask(origin: string, route: Route, key: string): Promise<Answer> {
  const response = await fetch(`${origin}${route.path}`, {
    method: route.method,
    headers: requestHeaders(route, key),
    body: route.body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: left as text, reported below
  }
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body };
}

/** An animal exactly as the API returns it: these four fields and no others. */
function isPet(value: unknown): value is { id: number; name: string; categoryId: number; status: string } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const pet = value as Record<string, unknown>;
  return (
    isDeepStrictEqual(Object.keys(pet).sort(), PET_KEYS) &&
    Number.isSafeInteger(pet.id) &&
    (pet.id as number) >= 1 &&
    typeof pet.name === 'string' &&
    Number.isSafeInteger(pet.categoryId) &&
    PET_STATUSES.includes(pet.status as (typeof PET_STATUSES)[number])
  );
}

/** What is wrong with `answer` to `route` on its own, or null. */
function problem(route: Route, answer: Answer): string | null {
  if (answer.status !== route.status) return `status ${answer.status}, expected ${route.status}`;
  if (!answer.contentType.startsWith('application/json')) return `content-type "${answer.contentType}", expected JSON`;
  const { body } = answer;
  if (route.method === 'POST') {
    if (!isPet(body)) return 'a body that is not an animal';
    const { id: _id, ...sent } = body;
    return isDeepStrictEqual(sent, { ...NEW_PET }) ? null : 'an animal other than the one sent';
  }
  const url = new URL(route.path, 'http://server');
  if (url.pathname === '/v1/pets') {
    const limit = Number(url.searchParams.get('limit'));
    const status = url.searchParams.get('status');
    if (!Array.isArray(body) || !body.every(isPet)) return 'a body that is not a list of animals';
    if (body.length !== limit) return `${body.length} animals, expected ${limit}`;
    if (!body.every((pet, i) => i === 0 || pet.id > body[i - 1].id)) return 'animals not in ascending id order';
    if (status !== null && !body.every((pet) => pet.status === status)) return `animals whose status is not ${status}`;
    return null;
  }
  const id = Number(url.pathname.split('/').at(-1));
  return isPet(body) && body.id === id ? null : `a body that is not animal ${id}`;
}

/**
 * Asks every server each route's request once, with the server's key, and throws, naming the server and what it
 * answered, unless every answer is right and the reads (list, get) return the same animals as the service's.
 * Creates one animal per server.
 */
export async function checkAnswers(
  servers: Record<string, { origin: string; key: string }>,
  routes: Route[],
): Promise<void> {
  const failures: string[] = [];
  for (const route of routes) {
    let reference: { server: string; body: unknown } | undefined;
    for (const [server, { origin, key }] of Object.entries(servers)) {
      const answer = await ask(origin, route, key);
      const found = problem(route, answer);
      if (found) {
        const body = JSON.stringify(answer.body).slice(0, 200);
        failures.push(`${server} answered ${route.method} ${route.path} with ${found}: ${body}`);
      } else if (route.method === 'GET') {
        reference ??= { server, body: answer.body };
        if (!isDeepStrictEqual(answer.body, reference.body)) {
          failures.push(`${server} answered ${route.method} ${route.path} with other animals than ${reference.server}`);
        }
      }
    }
  }
  if (failures.length > 0) {
    throw new Error(`Not measured: a server answers the benchmarked requests wrongly.\n  ${failures.join('\n  ')}`);
  }
}
