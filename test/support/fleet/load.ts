import { expect } from '@jest/globals';
import { pollUntil } from '../poll.js';
import { ServiceProcess } from '../service-process.js';
import { queryOnce } from './debian-services.js';

/** Bounded clients for the fleet tests, each request's outcome recorded, and what the tests read from them. */

export interface Outcome {
  /** `read-back`: a GET of an animal by id sent at once after its create was answered 201 (`readBack`). */
  operation: 'list' | 'create' | 'get' | 'read-back';
  /** The HTTP status, or undefined when the request failed at the connection level. */
  status?: number;
  /** The connection-level failure (ECONNRESET, UND_ERR_SOCKET, ...), if any. */
  error?: string;
  /** A non-2xx answer's body (who answered: the service's Error JSON, or the balancer's page) and `Retry-After`. */
  failure?: { body: string; retryAfter: string | null };
  /** Creates: the animal's name, also its Idempotency-Key. */
  name?: string;
  sentAt: number;
  answeredAt: number;
}

export interface LoadOptions {
  origin: string;
  key: string;
  /** Names of created animals start with this (unique per run). */
  prefix: string;
  ratePerSecond: number;
  /** At least this many requests are sent; more while the run is not `finish`ed, up to `maxCount`. */
  count: number;
  maxCount?: number;
  /** The operations sent in turn (default: list, create, get: a third creates); a get before any id is a list. */
  mix?: readonly ('list' | 'create' | 'get')[];
  /** Animals `get` reads besides those this run creates. */
  ids?: readonly number[];
  /** Each create answered 201 is read back by id at once, by the same client. */
  readBack?: boolean;
}

export const isFailure = (o: Outcome) => o.status === undefined || o.status < 200 || o.status > 299;

/** The names of the creates answered 201. */
export const acknowledged = (outcomes: Outcome[]) =>
  outcomes.filter((o) => o.operation === 'create' && o.status === 201).map((o) => o.name!);

function failureCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).name ?? String(error);
}

/** Lists, creates carrying an Idempotency-Key and gets of created animals, in turn (`mix`), at a fixed rate. */
export function startLoad(options: LoadOptions) {
  const { origin, key, prefix, ratePerSecond, count, maxCount = count } = options;
  const mix = options.mix ?? (['list', 'create', 'get'] as const);
  let finished = false;
  const authorization = `Bearer ${key}`;
  const read: RequestInit = { headers: { authorization } };
  const outcomes: Outcome[] = [];
  const createdIds: number[] = [...(options.ids ?? [])];
  const started = Date.now();

  const one = async (i: number): Promise<void> => {
    const kind = mix[i % mix.length];
    if (kind === 'create') {
      const name = `${prefix}-${i}`;
      const headers = { authorization, 'content-type': 'application/json', 'idempotency-key': name };
      const body = JSON.stringify({ name, categoryId: 1 });
      const id = await send('create', `${origin}/v1/pets`, { method: 'POST', headers, body }, name);
      if (id !== undefined && options.readBack) await send('read-back', `${origin}/v1/pets/${id}`, read, name);
    } else if (kind === 'get' && createdIds.length > 0) {
      await send('get', `${origin}/v1/pets/${createdIds[i % createdIds.length]}`, read);
    } else {
      await send('list', `${origin}/v1/pets?limit=5`, read);
    }
  };

  /** Sends one request and records its outcome; a create answered 201: the new animal's id. */
  const send = async (operation: Outcome['operation'], url: string, init: RequestInit, name?: string) => {
    const sentAt = Date.now();
    try {
      const response = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
      const body = await response.text();
      const id =
        operation === 'create' && response.status === 201 ? (JSON.parse(body) as { id: number }).id : undefined;
      if (id !== undefined) createdIds.push(id);
      const outcome: Outcome = { operation, status: response.status, name, sentAt, answeredAt: Date.now() };
      if (isFailure(outcome)) outcome.failure = { body, retryAfter: response.headers.get('retry-after') };
      outcomes.push(outcome);
      return id;
    } catch (error) {
      outcomes.push({ operation, error: failureCode(error), name, sentAt, answeredAt: Date.now() });
    }
  };

  const done = (async () => {
    const pending: Promise<void>[] = [];
    for (let i = 0; i < maxCount && (i < count || !finished); i += 1) {
      const wait = started + (i * 1000) / ratePerSecond - Date.now();
      if (wait > 0) await new Promise((wake) => setTimeout(wake, wait));
      pending.push(one(i));
    }
    await Promise.all(pending);
    return outcomes;
  })();
  /** `finish()`: no more requests once `count` are sent (at once if they already are). */
  return { done, outcomes, finish: () => void (finished = true) };
}
export type Load = ReturnType<typeof startLoad>;

/** Resolves once `count` more requests of `load` were answered. */
export const answeredMore = (
  load: Load,
  count: number,
  { timeoutMs = 30_000, what = `${count} more answers` } = {},
) => {
  const target = load.outcomes.length + count;
  return pollUntil(() => load.outcomes.length >= target, { timeoutMs, intervalMs: 50, what });
};

/** Prints a test's figures, under the spec's `name`, for the docs to quote. */
export const reporter = (name: string) => (title: string, figures: unknown) =>
  process.stdout.write(`${name}: ${title}: ${JSON.stringify(figures)}\n`);

export function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

export function summarise(outcomes: Outcome[]) {
  return {
    requests: outcomes.length,
    byStatus: countBy(outcomes.flatMap((o) => (o.status === undefined ? [] : [String(o.status)]))),
    connectionFailures: countBy(outcomes.flatMap((o) => (o.error === undefined ? [] : [o.error]))),
    non2xx: outcomes.filter(isFailure).length,
    non2xxBodies: [...new Set(outcomes.flatMap((o) => (o.failure ? [o.failure.body.slice(0, 80)] : [])))],
    creates: outcomes.filter((o) => o.operation === 'create').length,
    created201: acknowledged(outcomes).length,
  };
}

/** The animals stored under `prefix`, read at `url`: name -> how many rows. */
export async function storedByName(url: string, prefix: string): Promise<Map<string, number>> {
  const rows = await queryOnce<{ name: string; count: string }>(
    url,
    'SELECT name, count(*) FROM pets WHERE starts_with(name, $1) GROUP BY name',
    [`${prefix}-`],
  );
  return new Map(rows.map((row) => [row.name, Number(row.count)]));
}

/** Every create answered 201 is stored exactly once, and no animal twice. */
export function expectAcknowledgedStoredOnce(outcomes: Outcome[], stored: Map<string, number>) {
  const names = acknowledged(outcomes);
  expect(names.length).toBeGreaterThan(0);
  expect(names.filter((name) => stored.get(name) !== 1)).toEqual([]);
  expect([...stored].filter(([, rows]) => rows > 1)).toEqual([]);
}

/** What the service wrote at error level (or matching `also`), and anything not JSON, on stdout or stderr. */
export function loggedErrors(service: ServiceProcess, also?: RegExp): string[] {
  const bad = (line: string) => {
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      return (entry.level ?? 0) >= 50 || also?.test(entry.msg ?? '') === true;
    } catch {
      return true;
    }
  };
  return [...service.stderr, ...service.lines.filter(bad)];
}
