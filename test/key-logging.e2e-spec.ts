import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { apikeyScript as apikey, ensureBuilt } from './support/built-service.js';
import { ServiceProcess, startService } from './support/service-process.js';
import { createTestDatabase, TestDatabase } from './support/test-database.js';

const digest = (key: string) => createHash('sha256').update(key).digest('hex');

/** Whatever logger the built service uses, nothing it writes may contain a key or a key's digest. */
describe('keys never appear in logs', () => {
  let database: TestDatabase;
  let service: ServiceProcess;
  const envKey = `env_${randomBytes(24).toString('base64url')}`;
  const unknownKey = `pet_${'Q'.repeat(8)}${randomBytes(18).toString('hex').slice(0, 24)}`;
  const failingKey = `pet_${'F'.repeat(8)}${randomBytes(18).toString('hex').slice(0, 24)}`;
  const malformedKey = `not-a-pet-key-${randomBytes(12).toString('hex')}`;
  let issuedKey: string;
  let revokedKey: string;
  let output = '';

  const stop = async (running: ServiceProcess) => {
    running.kill('SIGTERM');
    await running.exited;
  };
  const call = (path: string, init: RequestInit = {}) => fetch(`${service.origin}${path}`, init).then((r) => r.status);
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const list = (key: string) => call('/v1/pets', { headers: bearer(key) });
  const create = (key: string, body: string) =>
    call('/v1/pets', { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body });

  beforeAll(async () => {
    await ensureBuilt();
    database = await createTestDatabase();
    service = await startService({
      NODE_ENV: 'development',
      LOG_LEVEL: 'trace',
      DATABASE_URL: database.url,
      API_KEYS: envKey,
      RATE_LIMIT_PER_MINUTE: '4',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '1000',
    });
    issuedKey = (await apikey(database.url, 'create', 'logged client')).stdout.trim();
    revokedKey = (await apikey(database.url, 'create', 'revoked client')).stdout.trim();
    expect(await apikey(database.url, 'revoke', revokedKey.slice(0, 12))).toMatchObject({ code: 0 });

    const statuses = [
      await list(issuedKey),
      await list(envKey),
      await call('/v1/pets/1', { headers: bearer(envKey) }), // deprecated operation: logs the caller's key id
      await list(unknownKey),
      await list(malformedKey),
      await call('/v1/pets', { headers: { authorization: `Basic ${issuedKey}` } }),
      await list(revokedKey),
      await call(`/v1/pets?access_token=${issuedKey}`),
      await create(issuedKey, `{"name": "${issuedKey}", broken`),
      await create(envKey, JSON.stringify({ name: 'x'.repeat(20_000) })),
      await call(`/v1/${issuedKey}`, { headers: bearer(issuedKey) }),
      ...(await Promise.all(Array.from({ length: 4 }, () => list(issuedKey)))),
    ];
    expect(statuses.slice(0, 11)).toEqual([200, 200, 404, 401, 401, 401, 401, 401, 400, 413, 404]);
    expect(statuses.slice(11)).toContain(429);

    // A key lookup that fails in the database: the error is logged, with the query's parameters at hand.
    const sql = new Client({ connectionString: database.url });
    await sql.connect();
    await sql.query('ALTER TABLE api_keys RENAME TO api_keys_elsewhere');
    expect(await list(failingKey)).toBe(500);
    await sql.query('ALTER TABLE api_keys_elsewhere RENAME TO api_keys');
    await sql.end();
    await stop(service);
    output = [...service.lines, ...service.stderr].join('\n');
  }, 240_000);

  afterAll(async () => {
    if (service) await stop(service);
    await database?.drop();
  });

  it('captured what the service logged', () => {
    expect(output).toMatch(/Animal store API on http:\/\/127\.0\.0\.1:\d+\/v1/);
    expect(output).toContain('relation "api_keys" does not exist');
  });

  it.each([
    ['an issued key', () => issuedKey],
    ['an API_KEYS key', () => envKey],
    ['a revoked key', () => revokedKey],
    ['an unknown key', () => unknownKey],
    ['a malformed key', () => malformedKey],
    ['a key whose lookup failed', () => failingKey],
  ])('contains neither %s nor its digest', (_what, key) => {
    expect(output).not.toContain(key());
    expect(output).not.toContain(key().slice(12));
    expect(output).not.toContain(digest(key()));
  });
});
