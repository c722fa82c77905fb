import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, jest } from '@jest/globals';
import fc from 'fast-check';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { ErrorBody } from '../src/edge/errors/api-error.js';
import type { Pet } from '../src/pets/dto/pet.dto.js';
import { ROOT } from './support/built-service.js';
import { Contract } from './support/fuzz/contract.js';
import {
  HOSTILE_JSON_VALUES,
  HOSTILE_MEMBERS,
  HOSTILE_NUMBER_LITERALS,
  HOSTILE_PATH_SEGMENTS,
  HOSTILE_STRINGS,
} from './support/fuzz/hostile-values.js';
import { ApiResponse, auth, request, startTestApp, TEST_KEY, TestApp } from './support/test-app.js';
import { responseValidatorFor } from './support/openapi-response-validator.js';
import { exchange, rawRequest } from './support/raw-http.js';
import { MAX_BODY_DEPTH } from '../src/edge/json-body-parser.js';
import { PageCursorCodec } from '../src/pets/page-cursor.codec.js';

const BODY_LIMIT_BYTES = 16 * 1024;
/** Node's limit on the request line and headers together. */
const REQUEST_HEAD_LIMIT_BYTES = 16 * 1024;
const LIST_PAGE_BOUND = 100;

/** A non-negative integer from the environment: FUZZ_RUNS=… runs more cases, FUZZ_SEED=… replays a run. */
function fromEnvironment(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}
const RUNS = fromEnvironment('FUZZ_RUNS', 25);
const SEED = fromEnvironment('FUZZ_SEED', Date.now() % 2 ** 31);

/** Percent-encodes as a careless client would: a lone surrogate as its three (invalid UTF-8) bytes, not as U+FFFD. */
function percentEncode(text: string): string {
  return [...text]
    .map((char) => {
      const unit = char.charCodeAt(0);
      if (char.length > 1 || unit < 0xd800 || unit > 0xdfff) return encodeURIComponent(char);
      return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    })
    .join('');
}

/** A query string built by hand, so that a parameter can be repeated or sent malformed. */
const queryString = (pairs: [string, string][]) =>
  pairs.length === 0
    ? ''
    : `?${pairs.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`).join('&')}`;

/** The canonical decimal form of an integer, as a query parameter must be written. */
const DECIMAL_INTEGER = /^(0|-?[1-9][0-9]*)$/;

const jsonMember = ([name, value]: [string, unknown]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`;

describe('contract fuzzing (e2e)', () => {
  console.info(`contract-fuzz: FUZZ_RUNS=${RUNS} FUZZ_SEED=${SEED} (replay with these variables)`);
  // The slowest property (create, read, list) sets the time each case may take; FUZZ_RUNS scales it.
  jest.setTimeout(30_000 + RUNS * 25);
  const settings = <T>(): fc.Parameters<T> => ({ numRuns: RUNS, seed: SEED, endOnFailure: true });
  /** The whole corpus every run (as fast-check examples, which count as runs), then the random cases. */
  const everyCaseAnd = <T extends unknown[]>(examples: T[]) => ({
    ...settings<T>(),
    examples,
    numRuns: examples.length + RUNS,
  });
  let t: TestApp;
  let contract: Contract;

  beforeAll(async () => {
    t = await startTestApp();
    const response = await fetch(`${t.origin}/docs-json`);
    expect(response.status).toBe(200);
    contract = new Contract((await response.json()) as OpenAPIObject);
  });
  afterAll(() => t.close());

  // request() checks each response against the served document; whatever it says, never a 5xx, and the headers
  // these statuses need by their RFCs.
  async function send<T = unknown>(path: string, init: RequestInit = {}): Promise<ApiResponse<T>> {
    const response = await request<T>(t.origin, `${contract.basePath}${path}`, init);
    const what = `${init.method ?? 'GET'} ${path.slice(0, 200)} answered ${response.status}`;
    if (response.status >= 500) throw new Error(`${what}: ${response.text.slice(0, 300)}`);
    const needed = { 401: 'www-authenticate', 405: 'allow', 429: 'retry-after', 503: 'retry-after' }[response.status];
    if (needed && !response.headers.has(needed)) throw new Error(`${what} without ${needed}`);
    return response;
  }

  function expectError(response: ApiResponse, status: number, what: string) {
    if (response.status !== status) {
      throw new Error(`${what}: expected ${status}, got ${response.status}: ${response.text.slice(0, 300)}`);
    }
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual({ code: expect.any(String), message: expect.any(String), status });
  }

  const get = <T = unknown>(path: string) => send<T>(path, { headers: auth() });
  const list = <T = unknown>(pairs: [string, string][]) => get<T>(`/pets${queryString(pairs)}`);
  const post = <T = unknown>(body: string | Uint8Array) =>
    send<T>('/pets', { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body });

  /** A request sent as written (fetch would normalise or refuse it), its answer checked against the document. */
  async function sendRaw(method: string, path: string, headers: [string, string][], body = '') {
    const answer = await exchange(t.origin, rawRequest(method, `${contract.basePath}${path}`, headers, body));
    if (!answer) throw new Error(`${method} ${path}: no answer`);
    (await responseValidatorFor(t.origin)).validate(method, new URL(`${t.origin}${contract.basePath}${path}`), answer);
    return answer as ApiResponse<ErrorBody>;
  }

  const countPets = async () =>
    Number((await t.sql.query<{ count: string }>('SELECT count(*) FROM pets')).rows[0].count);

  /** The listPets parameters a client chooses (the cursor is opaque: it only comes from a Link header). */
  const chosenParameters = () => contract.operation('listPets').parameters.filter((p) => p.name !== 'cursor');

  const validQuery = () =>
    fc
      .record(Object.fromEntries(chosenParameters().map((p) => [p.name, contract.valid(p.schema)])), {
        requiredKeys: [],
      })
      .map((query) => Object.entries(query).map(([name, value]) => [name, String(value)] as [string, string]));

  const nextLink = (response: ApiResponse) => /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1];

  /** Follows the next-page links of a listPets query, a bounded number of pages. */
  async function listAll(query: string): Promise<Pet[]> {
    const pets: Pet[] = [];
    let path: string | undefined = `/pets${query}`;
    for (let page = 0; path !== undefined && page < LIST_PAGE_BOUND; page += 1) {
      const response: ApiResponse<Pet[]> = await get<Pet[]>(path);
      expect(response.status).toBe(200);
      pets.push(...response.body);
      path = nextLink(response)?.slice(contract.basePath.length);
    }
    expect(path).toBeUndefined();
    return pets;
  }

  describe('listPets', () => {
    it('accepts every valid query with a page that honours it', async () => {
      await fc.assert(
        fc.asyncProperty(validQuery(), async (pairs) => {
          const query = Object.fromEntries(pairs);
          const response = await list<Pet[]>(pairs);

          expect(response.status).toBe(200);
          expect(response.body.length).toBeLessThanOrEqual(Number(query.limit ?? 20));
          if (query.status)
            expect(response.body.filter(({ status }: { status: string }) => status !== query.status)).toEqual([]);
        }),
        settings(),
      );
    });

    it('rejects a query breaking one constraint, or repeating a parameter, with 400', async () => {
      const breaks = chosenParameters().flatMap((parameter) =>
        contract.queryBreaks(parameter.schema).map(({ constraint, value }) => ({
          why: `${parameter.name}: ${constraint}`,
          apply: (pairs: [string, string][]) => [
            ...pairs.filter(([name]) => name !== parameter.name),
            [parameter.name, String(value)] as [string, string],
          ],
        })),
      );
      const repeats = contract.operation('listPets').parameters.map((parameter) => ({
        why: `${parameter.name}: repeated`,
        apply: (pairs: [string, string][]) => {
          const value = pairs.find(([name]) => name === parameter.name)?.[1] ?? 'available';
          return [...pairs, [parameter.name, value], [parameter.name, value]] as [string, string][];
        },
      }));
      await fc.assert(
        fc.asyncProperty(validQuery(), fc.constantFrom(...breaks, ...repeats), async (pairs, mutation) => {
          expectError(await list(mutation.apply(pairs)), 400, mutation.why);
        }),
        settings(),
      );
    });

    it('answers hostile values in every parameter, and in unknown ones, without failing', async () => {
      const parameters = contract.operation('listPets').parameters;
      const names = [...parameters.map((p) => p.name), '__proto__', 'constructor', 'limit[]', ''];
      const values = [...HOSTILE_STRINGS, ...HOSTILE_NUMBER_LITERALS];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...names), fc.constantFrom(...values), async (name, value) => {
          const path = `/pets${queryString([[name, value]])}`;
          const response = await get(path);

          if (path.length > REQUEST_HEAD_LIMIT_BYTES)
            return expectError(response, 400, `${name}: ${path.length} bytes`);
          const parameter = parameters.find((p) => p.name === name);
          if (!parameter) return expect(response.status).toBe(200);
          const schema = parameter.schema;
          const valid =
            name !== 'cursor' &&
            (schema.enum
              ? schema.enum.includes(value)
              : DECIMAL_INTEGER.test(value) && Number(value) >= schema.minimum! && Number(value) <= schema.maximum!);
          if (valid) expect(response.status).toBe(200);
          else expectError(response, 400, `${name}=${JSON.stringify(value).slice(0, 40)}`);
        }),
        everyCaseAnd(names.flatMap((name) => values.map((value) => [name, value] as [string, string]))),
      );
    });
    it('refuses a cursor not issued for this list (altered, foreign, junk, another status) with 400 invalid_cursor', async () => {
      for (const name of ['Rex', 'Max']) expect((await post(JSON.stringify({ name, categoryId: 1 }))).status).toBe(201);
      const issued = async (query: string) =>
        new URL(nextLink(await get(`/pets?limit=1${query}`))!, t.origin).searchParams.get('cursor')!;
      const cursor = await issued('&status=available');
      const alphabet = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'];
      const altered = fc.oneof(
        fc
          .tuple(fc.nat({ max: cursor.length - 1 }), fc.constantFrom(...alphabet))
          .map(([at, char]) => `${cursor.slice(0, at)}${char}${cursor.slice(at + 1)}`),
        fc.nat({ max: cursor.length - 1 }).map((length) => cursor.slice(0, length)),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }).map((extra) => `${cursor}${extra}`),
        fc.constantFrom(...HOSTILE_STRINGS).map((hostile) => `${cursor}${hostile}`),
      );
      const foreign = new PageCursorCodec('some-other-deployment-secret-0123456789').encode({ after: 1 });
      const junk = [foreign, 'not-a-cursor', 'A'.repeat(8_000), ...HOSTILE_STRINGS];
      const examples: [string, string | undefined][] = [
        [cursor, 'sold'],
        [cursor, undefined],
        [await issued(''), 'available'],
        ...junk.map((value) => [value, undefined] as [string, undefined]),
      ];
      await fc.assert(
        fc.asyncProperty(altered, fc.constantFrom('available', 'pending', 'sold', undefined), async (value, status) => {
          fc.pre(value !== cursor || status !== 'available');
          const pairs: [string, string][] = status
            ? [
                ['cursor', value],
                ['status', status],
              ]
            : [['cursor', value]];
          const response = await list<ErrorBody>(pairs);

          expectError(response, 400, `cursor ${JSON.stringify(value).slice(0, 60)} with status ${String(status)}`);
          expect(response.headers.get('link')).toBeNull();
          if (`/pets${queryString(pairs)}`.length <= REQUEST_HEAD_LIMIT_BYTES)
            expect(response.body.code).toBe('invalid_cursor');
        }),
        everyCaseAnd(examples),
      );
    });
  });

  describe('createPet', () => {
    it('accepts every valid body; the animal is then readable with getPet and listed under its status', async () => {
      const newPet = contract.requestBodySchema('createPet');
      const defaultStatus = contract.resolve(newPet.properties!.status).default as string;
      await fc.assert(
        fc.asyncProperty(contract.valid(newPet), async (body) => {
          const created = await post<Pet>(JSON.stringify(body));

          expect(created.status).toBe(201);
          expect(created.body).toEqual({ status: defaultStatus, ...(body as object), id: expect.any(Number) });
          const read = await get(`/pets/${created.body.id}`);
          expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: created.body });
          expect(await listAll(`?status=${created.body.status}&limit=100`)).toContainEqual(created.body);
        }),
        { ...settings(), numRuns: Math.ceil(RUNS / 2) },
      );
    });

    it('rejects a body breaking one constraint with 400 and stores nothing', async () => {
      await fc.assert(
        fc.asyncProperty(
          contract.objectBreaks(contract.requestBodySchema('createPet')),
          async ({ constraint, body }) => {
            const before = await countPets();
            const response = await post(JSON.stringify(body));

            expectError(response, 400, constraint);
            expect(await countPets()).toBe(before);
          },
        ),
        settings(),
      );
    });

    it('answers hostile values in every field, and hostile members, as the schema says', async () => {
      const newPet = contract.requestBodySchema('createPet');
      const fields = Object.keys(newPet.properties!);
      const valueTexts = [
        ...HOSTILE_STRINGS.map((value) => JSON.stringify(value)),
        ...HOSTILE_NUMBER_LITERALS,
        ...HOSTILE_JSON_VALUES,
      ];
      const validBody = contract.valid(newPet) as fc.Arbitrary<Record<string, unknown>>;
      const withHostileField = fc
        .tuple(validBody, fc.constantFrom(...fields), fc.constantFrom(...valueTexts))
        .map(([body, field, text]) => {
          const members = Object.entries(body).filter(([name]) => name !== field);
          return `{${[...members.map(jsonMember), `${JSON.stringify(field)}:${text}`].join(',')}}`;
        });
      const withHostileMember = fc
        .tuple(validBody, fc.constantFrom(...HOSTILE_MEMBERS), fc.boolean())
        .map(([body, member, first]) => {
          const members = Object.entries(body).map(jsonMember);
          return `{${(first ? [member, ...members] : [...members, member]).join(',')}}`;
        });

      const base = { name: 'Rex', categoryId: 1, status: 'pending' };
      const examples = [
        ...fields.flatMap((field) =>
          valueTexts.map((text) => JSON.stringify({ ...base, [field]: 0 }).replace(/:0(?=[,}])/, () => `:${text}`)),
        ),
        ...HOSTILE_MEMBERS.map((member) => `{${member},${JSON.stringify(base).slice(1)}`),
      ].map((text) => [text] as [string]);
      await fc.assert(
        fc.asyncProperty(fc.oneof(withHostileField, withHostileMember), async (text) => {
          const before = await countPets();
          const response = await post<Pet>(text);

          if (Buffer.byteLength(text) > BODY_LIMIT_BYTES) return expectError(response, 413, text.slice(0, 60));
          const parsed = JSON.parse(text) as object;
          if (!contract.acceptsBody('createPet', parsed)) {
            expectError(response, 400, text.slice(0, 80));
            return expect(await countPets()).toBe(before);
          }
          expect(response.status).toBe(201);
          const read = await get(`/pets/${response.body.id}`);
          expect(read.body).toEqual({ status: 'available', ...parsed, id: response.body.id });
        }),
        everyCaseAnd(examples),
      );
    });
    it(`answers a body nested to any depth with 400, naming the depth past ${MAX_BODY_DEPTH}, and stores nothing`, async () => {
      const newPet = contract.requestBodySchema('createPet');
      const fields = [...Object.keys(newPet.properties!), 'extra'];
      const nesting = fc.record({
        depth: fc.oneof(fc.integer({ min: 2, max: MAX_BODY_DEPTH + 2 }), fc.integer({ min: 2, max: 9_000 })),
        kinds: fc.constantFrom('arrays', 'objects', 'mixed'),
        field: fc.constantFrom(...fields),
      });
      /** `{..., field: <depth - 1 levels>}`: the outer object is level 1. */
      const nestedBody = ({ depth, kinds, field }: { depth: number; kinds: string; field: string }) => {
        const levels = Array.from({ length: depth - 1 }, (_, level) =>
          kinds === 'arrays' || (kinds === 'mixed' && level % 2 === 0) ? ['[', ']'] : ['{"k":', '}'],
        );
        const inner = levels.reduceRight((text, [open, close]) => `${open}${text}${close}`, '1');
        const others = Object.entries({ name: 'Deep', categoryId: 1 }).filter(([name]) => name !== field);
        return `{${[...others.map(jsonMember), `"${field}":${inner}`].join(',')}}`;
      };
      await fc.assert(
        fc.asyncProperty(nesting, async (shape) => {
          const text = nestedBody(shape);
          const before = await countPets();
          const response = await post<ErrorBody>(text);

          const what = `${shape.kinds} ${shape.depth} deep in ${shape.field}`;
          if (Buffer.byteLength(text) > BODY_LIMIT_BYTES) expectError(response, 413, what);
          else {
            expectError(response, 400, what);
            expect(response.body.code).toBe(shape.depth > MAX_BODY_DEPTH ? 'invalid_json' : 'validation_failed');
          }
          expect(await countPets()).toBe(before);
        }),
        everyCaseAnd(
          [MAX_BODY_DEPTH, MAX_BODY_DEPTH + 1, 2_000, 5_000].map((depth) => [
            { depth, kinds: 'arrays', field: depth === 5_000 ? 'name' : 'extra' },
          ]),
        ),
      );
    });

    it('answers raw bytes in a name by the UTF-8 they are (or are not)', async () => {
      const bytes = fc.oneof(
        fc.uint8Array({ minLength: 1, maxLength: 12 }),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).map((text) => new Uint8Array(Buffer.from(text))),
      );
      await fc.assert(
        fc.asyncProperty(bytes, async (name) => {
          const body = Buffer.concat([Buffer.from('{"name":"'), name, Buffer.from('","categoryId":1}')]);
          const before = await countPets();
          const response = await post(body);

          if (!isUtf8(body)) {
            expectError(response, 400, `bytes ${Buffer.from(name).toString('hex')}`);
            return expect(await countPets()).toBe(before);
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(body.toString('utf8'));
          } catch {
            return expectError(response, 400, `bytes ${Buffer.from(name).toString('hex')}`);
          }
          if (!contract.acceptsBody('createPet', parsed)) return expectError(response, 400, JSON.stringify(parsed));
          expect(response.status).toBe(201);
          expect(response.body).toMatchObject(parsed as object);
        }),
        settings(),
      );
    });
  });

  describe('getPet', () => {
    it('rejects an id outside the schema, or a hostile path segment, with 400', async () => {
      const petId = contract.operation('getPet').parameters.find((p) => p.name === 'petId')!;
      const segments = [
        ...contract
          .queryBreaks(petId.schema)
          .filter(({ value }) => value !== '')
          .map(({ value }) => String(value)),
        ...HOSTILE_PATH_SEGMENTS,
        ...HOSTILE_STRINGS.filter((value) => value !== '').map(percentEncode),
      ];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...segments), async (segment) => {
          expectError(await get(`/pets/${segment}`), 400, `petId ${segment.slice(0, 40)}`);
        }),
        everyCaseAnd(segments.map((segment) => [segment] as [string])),
      );
    });
  });

  describe('every operation', () => {
    it('answers without a key exactly what docs/contract.md says is checked before it, and any other request 401', async () => {
      const { host } = new URL(t.origin);
      const json: [string, string] = ['Content-Type', 'application/json'];
      const pet = '{"name":"Rex","categoryId":1}';
      const keyTwice = ['a', 'b'].map((key): [string, string] => ['Idempotency-Key', key]);
      type Request = [method: string, path: string, headers: [string, string][], body?: string];
      const posted = (headers: [string, string][], body = pet) => ['POST', '/pets', headers, body] as Request;
      /** One request for each row of the contract's table, none carrying a key. */
      const cases: Record<string, Request> = {
        'An unknown path': ['GET', '/animals', []],
        'A method the path does not have': ['DELETE', '/pets', []],
        'A malformed URL': ['GET', '/pets/%E0%A4%A', []],
        'A repeated `Host`, `Authorization` or `Idempotency-Key` header': posted([json, ...keyTwice]),
        'A body that is not `application/json` in UTF-8, or is compressed': posted([['Content-Type', 'text/plain']]),
        'A body over 16 KiB': posted([json], JSON.stringify({ name: 'x'.repeat(20 * 1024), categoryId: 1 })),
        'A body that is not JSON: malformed, empty, not UTF-8, or nested deeper than 32 levels': posted([json], '{bad'),
      };
      const contractText = readFileSync(join(ROOT, 'docs', 'contract.md'), 'utf8').split('\n');
      const header = contractText.findIndex((line) => /^\| Checked before the key +\| Answer +\|$/.test(line));
      expect(header).toBeGreaterThan(-1);
      const end = contractText.findIndex((line, index) => index > header && !line.startsWith('|'));
      const rows = contractText
        .slice(header + 2, end)
        .map((line) => line.split('|').map((cell) => cell.trim()))
        .map(([, what, answer]) => ({ what, answer }));
      expect(rows.map((row) => row.what).sort()).toEqual(Object.keys(cases).sort());

      const answered = async ([method, path, headers, body]: Request) => {
        const answer = await sendRaw(method, path, [['Host', host], ...headers], body);
        return `${answer.status} \`${answer.body.code}\``;
      };
      for (const { what, answer } of rows)
        expect({ what, answer: await answered(cases[what]) }).toEqual({ what, answer });
      // What the table does not list waits for the key: a well-formed body breaking the schema, or an Idempotency-Key.
      const unlisted = await answered(['POST', '/pets', [json, ['Idempotency-Key', 'x']], '{"name":5}']);
      expect(unlisted).toBe('401 `unauthorized`');
    });

    it('refuses a repeated Host, Authorization or Idempotency-Key with 400, whatever the values', async () => {
      const operations = contract.operations();
      const headerValue = fc.oneof(fc.constant(TEST_KEY), fc.stringMatching(/^[!-~]{1,40}$/));
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...operations),
          fc.constantFrom('Host', 'Authorization', 'Idempotency-Key'),
          fc.tuple(headerValue, headerValue),
          fc.constantFrom('lower' as const, 'same' as const, 'upper' as const),
          async (operation, header, [first, second], letterCase) => {
            const path = operation.path.replace(/\{[^}]+\}/g, '1');
            const value = (raw: string) => (header === 'Authorization' ? `Bearer ${raw}` : raw);
            const repeatedName = { lower: header.toLowerCase(), same: header, upper: header.toUpperCase() }[letterCase];
            const sent = { Host: 'animal-store.test', Authorization: `Bearer ${TEST_KEY}`, [header]: value(first) };
            const headers: [string, string][] = [
              ...Object.entries(sent),
              ['Content-Type', 'application/json'],
              [repeatedName, value(second)],
            ];
            const body = operation.method === 'POST' ? JSON.stringify({ name: 'Twice', categoryId: 1 }) : '';
            const response = await sendRaw(operation.method, path, headers, body);
            expectError(response, 400, `${operation.operationId} with ${header} twice (${letterCase})`);
            expect(response.body.message).toBe(`The request carries more than one ${header} header; send it once.`);
          },
        ),
        everyCaseAnd(
          (['Host', 'Authorization', 'Idempotency-Key'] as const).map((header) => [
            operations.find((operation) => operation.method === 'POST')!,
            header,
            ['not-the-key-at-all', TEST_KEY] as [string, string],
            'lower',
          ]),
        ),
      );
      expect((await t.sql.query(`SELECT 1 FROM pets WHERE name = 'Twice'`)).rowCount).toBe(0);
    });
  });
});
