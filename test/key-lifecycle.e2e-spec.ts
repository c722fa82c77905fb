import { expect, jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { apikey as viaNpm, apikeyScript as apikey, ensureBuilt, KEY_LIST_COLUMNS } from './support/built-service.js';
import type { Finished } from './support/built-service.js';
import { openTransaction } from './support/database-migrations.js';
import { pollUntil } from './support/poll.js';
import { ServiceProcess, startService } from './support/service-process.js';
import { auth, jsonBody, request, TEST_KEY } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';
import type { Pet } from '../src/pets/dto/pet.dto.js';
import { KEY_CACHE_TTL_MS } from '../src/auth/api-key-store.js';

/** Each instance caches a key's row for KEY_CACHE_TTL_MS; a refusal is looked for a little longer, polling. */
const PROPAGATION_WINDOW_MS = 5_000;
const INVALID_TOKEN = 'Bearer realm="animal-store", error="invalid_token"';
const EXPIRED = {
  code: 'unauthorized',
  message: 'The API key has expired: use the key that replaced it, or ask for a new one.',
  status: 401,
};
/** Each run of the CLI is a process of its own (the script `npm run apikey` runs), and most tests run several. */
jest.setTimeout(120_000);

/** The new key a successful `create` or `rotate` printed: alone on stdout. */
function printedKey(result: Finished): string {
  expect([result.code, result.stdout.trim().split('\n').length]).toEqual([0, 1]);
  const key = result.stdout.trim();
  expect(key).toMatch(/^pet_[0-9A-Za-z]{32}$/);
  expect(result.stderr).not.toContain(key);
  return key;
}

/** Through the built CLI, against two instances on one database (`t` here, `other` built), each caching keys. */
describe('API keys with scopes, expiry and rotation', () => {
  let other: ServiceProcess;
  // Declared first, so that it runs before the app and its database close.
  afterAll(async () => {
    other?.kill('SIGTERM');
    await other?.exited;
  });
  const t = testAppPerBlock();
  const create = async (...args: string[]) => printedKey(await apikey(t.database.url, 'create', ...args));
  const idOf = async (key: string) =>
    (
      await t.sql.query<{ id: string }>('SELECT id::text AS id FROM api_keys WHERE digest = $1', [
        createHash('sha256').update(key).digest('hex'),
      ])
    ).rows[0].id;
  const statusOn = async (origin: string, key: string) =>
    (await request(origin, '/v1/pets', { headers: auth(key) })).status;
  const count = async (table: 'pets' | 'api_keys') =>
    Number((await t.sql.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
  const expiryOf = async (id: string) =>
    (await t.sql.query<{ expires_at: Date | null }>('SELECT expires_at FROM api_keys WHERE id = $1', [id])).rows[0]
      .expires_at;
  /** `at` lies `ahead` ms past a moment between `from` and `to`, to the database's rounding. */
  const expectAhead = (at: number, ahead: number, from: number, to: number) => {
    expect(at).toBeGreaterThanOrEqual(from + ahead - 1_000);
    expect(at).toBeLessThanOrEqual(to + ahead + 1_000);
  };
  const metric = async (series: string) => {
    const line = (await request(t.origin, '/metrics')).text.split('\n').find((l) => l.startsWith(`${series} `));
    return Number(line?.split(' ')[1]);
  };
  const expiringSoon = () => metric('animal_store_api_keys_expiring_soon');
  const expiryWarnings = (id: string) =>
    other.lines.filter((line) => line.includes(`API key ${id} was used and expires at`));
  const refusals = (reason: string) => metric(`animal_store_api_key_refusals_total{reason="${reason}"}`);

  beforeAll(async () => {
    await ensureBuilt();
    other = await startService({
      DATABASE_URL: t.database.url,
      API_KEYS: TEST_KEY,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000',
    });
  }, 240_000);

  // Runs through npm, as an operator types it; the other tests run the script npm runs.
  it('create prints the key alone and stores only its digest and prefix; its use is recorded off the request path', async () => {
    const created = await viaNpm(t.database.url, 'create', 'Acme shop');
    const key = printedKey(created);
    expect(created.stderr).toContain('Created API key');
    const id = await idOf(key);
    const stored = () => t.sql.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [id]);
    const { rows } = await stored();
    expect(rows[0]).toMatchObject({
      name: 'Acme shop',
      prefix: key.slice(0, 12),
      last_used_at: null,
      revoked_at: null,
    });
    expect(JSON.stringify(rows)).not.toContain(key);

    expect(await statusOn(t.origin, key)).toBe(200);
    await pollUntil(async () => (await stored()).rows[0].last_used_at !== null, {
      timeoutMs: 5_000,
      what: "the key's use to be recorded",
    });
  });

  describe('scopes', () => {
    const call = (key: string, route: string) =>
      request(
        t.origin,
        route.split(' ')[1],
        route.startsWith('POST') ? jsonBody({ name: 'Rex', categoryId: 1 }, key) : { headers: auth(key) },
      );

    it.each([
      ['pets:read', { 'GET /v1/pets': 200, 'GET /v1/pets/1': 404 }, 'POST /v1/pets', 'pets:write'],
      ['pets:write', { 'POST /v1/pets': 201 }, 'GET /v1/pets', 'pets:read'],
    ] as const)(
      'a %s key is served what it allows and refused the rest with 403 insufficient_scope, storing nothing',
      async (scope, allowed, refusedRoute, needed) => {
        const key = await create(`only ${scope}`, '--scopes', scope);
        for (const [route, status] of Object.entries(allowed)) expect((await call(key, route)).status).toBe(status);
        const before = await count('pets');
        const insufficientBefore = await refusals('insufficient_scope');

        const refused = await call(key, refusedRoute);

        expect(refused.status).toBe(403);
        expect(refused.headers.get('www-authenticate')).toBe(
          `Bearer realm="animal-store", error="insufficient_scope", scope="${needed}"`,
        );
        expect(refused.body).toEqual({
          code: 'insufficient_scope',
          message: `This operation needs the ${needed} scope, which the API key does not have: use a key issued with ${needed}.`,
          status: 403,
        });
        expect(await count('pets')).toBe(before);
        expect(await refusals('insufficient_scope')).toBe(insufficientBefore + 1);
      },
    );

    it('keys without scopes, keys from before scopes existed and API_KEYS keys may do everything', async () => {
      const unscoped = await create('full access');
      const both = await create('both', '--scopes', 'pets:read,pets:write');
      // A row as the previous build wrote it: no scopes, no expiry.
      const legacy = `pet_${'L'.repeat(32)}`;
      const digest = "encode(sha256(convert_to($1, 'UTF8')), 'hex')";
      await t.sql.query(`INSERT INTO api_keys (name, prefix, digest) VALUES ('legacy', left($1, 12), ${digest})`, [
        legacy,
      ]);
      for (const key of [unscoped, both, legacy, TEST_KEY]) {
        expect(await statusOn(t.origin, key)).toBe(200);
        expect((await request(t.origin, '/v1/pets', jsonBody({ name: 'Rex', categoryId: 1 }, key))).status).toBe(201);
      }
    });
  });

  it(`an expiry set in the database is refused by both instances within ${PROPAGATION_WINDOW_MS / 1000} s, without a restart`, async () => {
    const key = await create('partner');
    // Both instances hold a positive answer in their cache.
    expect([await statusOn(t.origin, key), await statusOn(other.origin, key)]).toEqual([200, 200]);
    const expiredBefore = await refusals('expired');

    await t.sql.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [await idOf(key)]);

    for (const origin of [t.origin, other.origin]) {
      await pollUntil(async () => (await statusOn(origin, key)) === 401, {
        timeoutMs: PROPAGATION_WINDOW_MS,
        what: `the expired key to be refused on ${origin}`,
      });
      expect((await request(origin, '/v1/pets', { headers: auth(key) })).body).toEqual(EXPIRED);
    }
    expect(await refusals('expired')).toBeGreaterThan(expiredBefore);
  });

  describe('rotation', () => {
    it('prints the new key alone; both work on both instances during the overlap, then only the new one', async () => {
      const old = await create('Acme shop', '--scopes', 'pets:read', '--expires-in', '30d');
      const oldId = await idOf(old);
      const before = await expiryOf(oldId);
      expect([await statusOn(t.origin, old), await statusOn(other.origin, old)]).toEqual([200, 200]);

      const rotated = await apikey(t.database.url, 'rotate', old.slice(0, 12), '--overlap', '15s');
      const replacement = printedKey(rotated);
      expect(rotated.stderr).toMatch(
        new RegExp(`The old key \\(prefix ${old.slice(0, 12)}\\) keeps working until \\d{4}-\\d\\d-\\d\\dT[\\d:]+Z`),
      );

      const { rows } = await t.sql.query<{ name: string; scopes: string[]; expires_at: Date }>(
        'SELECT name, scopes, expires_at FROM api_keys WHERE id IN ($1, $2) ORDER BY id',
        [oldId, await idOf(replacement)],
      );
      const same = { name: 'Acme shop', scopes: ['pets:read'] };
      // The new key keeps the old one's expiry: a rotation grants no more time than the key had.
      expect(rows).toEqual([
        { ...same, expires_at: expect.any(Date) },
        { ...same, expires_at: before },
      ]);
      expect(rows[0].expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 15_000);

      for (const origin of [t.origin, other.origin]) {
        expect([await statusOn(origin, old), await statusOn(origin, replacement)]).toEqual([200, 200]);
      }
      for (const origin of [t.origin, other.origin]) {
        await pollUntil(async () => (await statusOn(origin, old)) === 401, {
          timeoutMs: 30_000,
          what: `the rotated-out key to be refused on ${origin}`,
        });
        const refused = await request(origin, '/v1/pets', { headers: auth(old) });
        expect([refused.headers.get('www-authenticate'), refused.body]).toEqual([INVALID_TOKEN, EXPIRED]);
        expect(await statusOn(origin, replacement)).toBe(200);
      }
      // The replacement of the replacement too.
      const last = printedKey(await apikey(t.database.url, 'rotate', await idOf(replacement), '--overlap', '1h'));
      expect(await expiryOf(await idOf(last))).toEqual(before);
    });

    it('rotate --expires-in gives the replacement of a key expiring in 3 days the new lifetime; the old key ends with its overlap, and its use is warned about naming its replacement', async () => {
      const before = Date.now();
      const old = await create('renewed', '--expires-in', '3d');
      const oldId = await idOf(old);
      expectAhead((await expiryOf(oldId))!.getTime(), 3 * 86_400_000, before, Date.now());
      const rotating = Date.now();
      const rotated = await apikey(t.database.url, 'rotate', oldId, '--overlap', '1h', '--expires-in', '90d');
      const replacement = printedKey(rotated);
      const replacementId = await idOf(replacement);
      const after = Date.now();
      const replacementExpiry = (await expiryOf(replacementId))!.getTime();
      expectAhead(replacementExpiry, 90 * 86_400_000, rotating, after);
      expectAhead((await expiryOf(oldId))!.getTime(), 3_600_000, rotating, after);
      expect(rotated.stderr).toContain(
        `expires ${new Date(replacementExpiry).toISOString().replace(/\.\d{3}Z$/, 'Z')}`,
      );
      expect([await statusOn(other.origin, old), await statusOn(t.origin, replacement)]).toEqual([200, 200]);
      // A key in its overlap is warned about as replaced, naming its replacement, instead of asking to rotate it.
      await pollUntil(() => expiryWarnings(oldId).length > 0, { timeoutMs: 5_000, what: 'the expiry warning' });
      expect(expiryWarnings(oldId)[0]).toMatch(/"level":40|WARN/);
      expect(expiryWarnings(oldId)[0]).toContain(`replaced by key ${replacementId}: move its clients`);
      expect(expiryWarnings(oldId)[0]).not.toContain('rotate it');
    });

    it('counts a long-lived key about to expire as expiring soon, not a key short-lived on purpose; rotate --expires-in clears it', async () => {
      const baseline = await expiringSoon();
      const since = Date.now();
      await create('short-lived on purpose', '--expires-in', '3d');
      const longLived = await idOf(await create('long-lived', '--expires-in', '30d'));
      // A year-long key in its last 2 days.
      await t.sql.query(
        "UPDATE api_keys SET created_at = now() - interval '363 days', expires_at = now() + interval '2 days' WHERE id = $1",
        [longLived],
      );
      // Read once both keys exist: the gauge reads the database at most every KEY_CACHE_TTL_MS.
      await pollUntil(
        async () => Date.now() - since > 2 * KEY_CACHE_TTL_MS && (await expiringSoon()) === baseline + 1,
        { timeoutMs: 4 * KEY_CACHE_TTL_MS + 10_000, what: 'the long-lived key, and it alone, to be counted' },
      );
      printedKey(await apikey(t.database.url, 'rotate', longLived, '--expires-in', '365d'));
      await pollUntil(async () => (await expiringSoon()) === baseline, {
        timeoutMs: 4 * KEY_CACHE_TTL_MS + 10_000,
        what: 'the count to drop once the key is rotated with a new lifetime',
      });
    });

    it('two rotations of one key at once: exactly one issues a replacement, the other is refused naming it', async () => {
      const id = await idOf(await create('rotated at once'));
      const keys = await count('api_keys');
      // Both commands queue behind a lock this test holds on the key's row, then go at the same moment.
      const holder = await openTransaction(
        t.database.url,
        'BEGIN',
        `SELECT 1 FROM api_keys WHERE id = ${id} FOR UPDATE`,
      );
      let results: Finished[];
      try {
        const both = Promise.all([1, 2].map(() => apikey(t.database.url, 'rotate', id, '--overlap', '1h')));
        const waiting = `SELECT 1 FROM pg_stat_activity
                          WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`;
        const holderPid = (holder as unknown as { processID: number }).processID;
        await pollUntil(async () => (await t.sql.query(waiting, [holderPid])).rowCount === 2, {
          timeoutMs: 60_000,
          what: 'both rotations to wait for the lock',
        });
        await holder.query('COMMIT');
        results = await both;
      } finally {
        await holder.end();
      }

      expect(results.map((result) => result.code).sort()).toEqual([0, 1]);
      const winner = results.find((result) => result.code === 0)!;
      const loser = results.find((result) => result.code === 1)!;
      const replacementId = await idOf(printedKey(winner));
      expect(loser.stdout).toBe('');
      expect(loser.stderr.trim()).toMatch(
        new RegExp(
          `^API key ${id} "rotated at once" was replaced by key ${replacementId} at .*: rotate ${replacementId}, or revoke ${id}\\.$`,
        ),
      );
      expect(await count('api_keys')).toBe(keys + 1);
      // A key that never expires: the replacement of its replacement (the one the refusal names) never expires either.
      const last = printedKey(await apikey(t.database.url, 'rotate', replacementId, '--overlap', '1h'));
      expect(await expiryOf(await idOf(last))).toBeNull();
    });

    it('a create retried with the replacement key and the same Idempotency-Key is replayed, not made twice', async () => {
      const old = await create('retrying client');
      const keyed = (key: string) => {
        const init = jsonBody({ name: 'Rotated retry', categoryId: 6 }, key);
        return { ...init, headers: { ...(init.headers as Record<string, string>), 'idempotency-key': 'retry-42' } };
      };
      const first = await request<Pet>(t.origin, '/v1/pets', keyed(old));
      expect(first.status).toBe(201);
      const replacement = printedKey(await apikey(t.database.url, 'rotate', await idOf(old), '--overlap', '1h'));

      const retried = await request<Pet>(t.origin, '/v1/pets', keyed(replacement));

      expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
      expect(retried.body).toEqual(first.body);
      const { rows } = await t.sql.query<{ n: string }>(`SELECT count(*) AS n FROM pets WHERE name = 'Rotated retry'`);
      expect(rows[0].n).toBe('1');
    });
  });

  it('list shows scopes, expiry, each key’s state (active, in overlap, expired, revoked) and what replaced it, never a key or its digest; a revoked key cannot be rotated, nor an unknown one revoked (exit 1, one line), nor a bad argument taken (exit 2)', async () => {
    const listedKey = await create('listed', '--scopes', 'pets:read', '--expires-in', '90d');
    const active = await idOf(listedKey);
    const rotated = await idOf(await create('state rotated', '--expires-in', '5m'));
    const rotatedExpiry = await expiryOf(rotated);
    const replacement = await idOf(printedKey(await apikey(t.database.url, 'rotate', rotated, '--overlap', '1h')));
    // Rotation never extends a key that expires before its overlap ends.
    expect(await expiryOf(rotated)).toEqual(rotatedExpiry);
    const revokedKey = await create('revoked');
    const revoked = await idOf(revokedKey);
    expect((await apikey(t.database.url, 'revoke', revoked)).code).toBe(0);
    const expired = await idOf(await create('expired'));
    await t.sql.query(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1`, [expired]);

    const listed = await apikey(t.database.url, 'list');

    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/\s{2,}/));
    expect(header).toEqual(KEY_LIST_COLUMNS);
    const row = (id: string) => rows.find((cells) => cells[0] === id)!;
    expect(row(active).slice(1, 4)).toEqual(['listed', listedKey.slice(0, 12), 'pets:read']);
    expect(row(active)[6]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(rows.find((cells) => cells[1] === 'full access')![3]).toBe('all');
    const shown = (id: string) => [row(id)[header.indexOf('STATE')], row(id)[header.indexOf('REPLACED BY')]];
    expect([active, rotated, replacement, revoked, expired].map(shown)).toEqual([
      ['active', '-'],
      ['in overlap', replacement],
      ['active', '-'],
      ['revoked', '-'],
      ['expired', '-'],
    ]);
    const output = listed.stdout + listed.stderr;
    expect(output).not.toContain(createHash('sha256').update(listedKey).digest('hex'));
    expect(output).not.toMatch(/pet_[0-9A-Za-z]{32}/);

    // Every key it cannot rotate, every argument it refuses, and what it says: src/cli/apikey-commands.spec.ts; here,
    // what the built command does with them.
    const keys = await count('api_keys');
    for (const [args, code, says] of [
      [
        ['rotate', revokedKey.slice(0, 12)],
        1,
        /^API key \d+ "revoked" was revoked at [\dT:Z-]+, so it cannot be rotated: issue a new key with create\.$/,
      ],
      [
        ['revoke', '999999'],
        1,
        /^No API key has the id or prefix "999999": give an id or prefix that npm run apikey -- list shows\.$/,
      ],
      [['create', 'x', '--expires-in', '2w'], 2, /Invalid duration "2w" for --expires-in: use a whole number above 0/],
      [['delete', '1'], 2, /Usage: npm run apikey -- <command>/],
    ] as const) {
      const result = await apikey(t.database.url, ...args);
      expect([result.code, result.stdout]).toEqual([code, '']);
      expect(result.stderr.trim()).toMatch(says);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect(await count('api_keys')).toBe(keys);
  });
});
