/** A bounded client for the fleet test: a fixed rate for a fixed count, each request's outcome recorded. */

/** `read-back`: a GET of an animal by id sent at once after its create was answered 201 (`readBack`). */
export type Operation = 'list' | 'create' | 'get' | 'read-back';

export interface Outcome {
  operation: Operation;
  /** The HTTP status, or undefined when the request failed at the connection level. */
  status?: number;
  /** The connection-level failure (ECONNRESET, UND_ERR_SOCKET, ...), if any. */
  error?: string;
  /** A non-2xx answer's body, cut short: who answered (the service's Error JSON, or the balancer's page). */
  body?: string;
  /** A non-2xx answer's whole body and its `Retry-After`, to check the Error shape. */
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
  /** Per request. */
  timeoutMs?: number;
  /** The operations sent in turn (default: list, create, get: a third creates). */
  mix?: readonly Operation[];
  /** Animals `get` reads besides those this run creates. */
  ids?: readonly number[];
  /** Each create answered 201 is read back by id at once, by the same client. */
  readBack?: boolean;
}

export interface Load {
  done: Promise<Outcome[]>;
  /** Sends no more requests once `count` are sent (at once if they already are). */
  finish(): void;
  /** Outcomes so far. */
  outcomes: Outcome[];
}

function failureCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).name ?? String(error);
}

/** Lists, creates carrying an Idempotency-Key and gets of created animals, in turn (`mix`), at a fixed rate. */
export function startLoad(options: LoadOptions): Load {
  const { origin, key, prefix, ratePerSecond, count, maxCount = count, timeoutMs = 15_000 } = options;
  const mix = options.mix ?? (['list', 'create', 'get'] as const);
  let finished = false;
  const authorization = `Bearer ${key}`;
  const read: RequestInit = { headers: { authorization } };
  const outcomes: Outcome[] = [];
  const createdIds: number[] = [...(options.ids ?? [])];
  const started = Date.now();

  const one = async (i: number): Promise<void> => {
    const kind: Operation = mix[i % mix.length];
    const operation: Operation = kind === 'get' && createdIds.length === 0 ? 'list' : kind;
    const name = operation === 'create' ? `${prefix}-${i}` : undefined;
    const url =
      operation === 'list'
        ? `${origin}/v1/pets?limit=5`
        : operation === 'get'
          ? `${origin}/v1/pets/${createdIds[i % createdIds.length]}`
          : `${origin}/v1/pets`;
    const init: RequestInit =
      operation === 'create'
        ? {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json', 'idempotency-key': name! },
            body: JSON.stringify({ name, categoryId: 1 }),
          }
        : read;
    const id = await send(operation, url, init, name);
    if (id !== undefined && options.readBack) await send('read-back', `${origin}/v1/pets/${id}`, read, name);
  };

  /** Sends one request and records its outcome; a create answered 201: the new animal's id. */
  const send = async (operation: Operation, url: string, init: RequestInit, name?: string) => {
    const sentAt = Date.now();
    try {
      const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      const body = await response.text();
      const id =
        operation === 'create' && response.status === 201 ? (JSON.parse(body) as { id: number }).id : undefined;
      if (id !== undefined) createdIds.push(id);
      const failed = response.status < 200 || response.status > 299;
      outcomes.push({
        operation,
        status: response.status,
        name,
        sentAt,
        answeredAt: Date.now(),
        ...(failed && { body: body.slice(0, 80), failure: { body, retryAfter: response.headers.get('retry-after') } }),
      });
      return id;
    } catch (error) {
      outcomes.push({ operation, error: failureCode(error), name, sentAt, answeredAt: Date.now() });
    }
  };

  const done = (async () => {
    const pending: Promise<void>[] = [];
    for (let i = 0; i < maxCount && (i < count || !finished); i += 1) {
      const due = started + (i * 1000) / ratePerSecond;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((wake) => setTimeout(wake, wait));
      pending.push(one(i));
    }
    await Promise.all(pending);
    return outcomes;
  })();
  return { done, outcomes, finish: () => (finished = true) };
}

export interface LoadFigures {
  requests: number;
  byStatus: Record<string, number>;
  connectionFailures: Record<string, number>;
  non2xx: number;
  non2xxBodies: string[];
  creates: number;
  created201: number;
}

export function summarise(outcomes: Outcome[]): LoadFigures {
  const byStatus: Record<string, number> = {};
  const connectionFailures: Record<string, number> = {};
  for (const outcome of outcomes) {
    if (outcome.status !== undefined) byStatus[outcome.status] = (byStatus[outcome.status] ?? 0) + 1;
    else connectionFailures[outcome.error!] = (connectionFailures[outcome.error!] ?? 0) + 1;
  }
  return {
    requests: outcomes.length,
    byStatus,
    connectionFailures,
    non2xx: outcomes.filter((o) => o.status === undefined || o.status < 200 || o.status > 299).length,
    non2xxBodies: [...new Set(outcomes.filter((o) => o.body !== undefined).map((o) => o.body!))],
    creates: outcomes.filter((o) => o.operation === 'create').length,
    created201: outcomes.filter((o) => o.operation === 'create' && o.status === 201).length,
  };
}
