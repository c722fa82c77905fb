import { createHash } from 'node:crypto';
import { apikey, ensureBuilt } from './support/built-service.js';
import { pollUntil } from './support/poll.js';
import { auth, request, startTestApp, TestApp } from './support/test-app.js';

const KEY_LINE = /^pet_[0-9A-Za-z]{32}$/;
const REVOCATION_WINDOW_MS = 5_000;

describe('API keys issued with `npm run apikey`', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    await ensureBuilt();
    t = await startTestApp();
  }, 240_000);
  afterAll(() => t.close());

  it('create prints the new key alone on stdout, once, and stores only its digest and prefix', async () => {
    const created = await apikey(t.database.url, 'create', 'Acme shop');
    expect(created.code).toBe(0);
    const lines = created.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(KEY_LINE);
    key = lines[0];
    expect(created.stderr).toContain('Created API key');
    expect(created.stderr).not.toContain(key);

    const { rows } = await t.sql.query('SELECT * FROM api_keys');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      name: 'Acme shop',
      prefix: key.slice(0, 12),
      digest: createHash('sha256').update(key).digest('hex'),
      last_used_at: null,
      revoked_at: null,
    });
    expect(JSON.stringify(rows)).not.toContain(key);
  });

  it('the key works at once, and its use is recorded off the request path', async () => {
    const response = await request(t.origin, '/v1/pets', { headers: auth(key) });
    expect(response.status).toBe(200);
    await pollUntil(
      async () => {
        const { rows } = await t.sql.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys');
        return rows[0].last_used_at !== null;
      },
      { timeoutMs: 5_000, what: "the key's use to be recorded" },
    );
  });

  it(`a revoked key is refused within ${REVOCATION_WINDOW_MS / 1000} s, without a restart`, async () => {
    // Warm the cache with a positive answer so the refusal has to come from its expiry.
    expect((await request(t.origin, '/v1/pets', { headers: auth(key) })).status).toBe(200);
    const revoked = await apikey(t.database.url, 'revoke', key.slice(0, 12));
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain('Revoked API key 1 "Acme shop"');

    await pollUntil(async () => (await request(t.origin, '/v1/pets', { headers: auth(key) })).status === 401, {
      timeoutMs: REVOCATION_WINDOW_MS,
      what: 'the revoked key to be refused',
    });
    const refused = await request(t.origin, '/v1/pets', { headers: auth(key) });
    expect(refused.body).toEqual({ code: 'unauthorized', message: 'The API key is not valid.', status: 401 });

    const { rows } = await t.sql.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = 1');
    expect(rows[0].revoked_at).toBeInstanceOf(Date);
  });

  // Which arguments are no command: src/cli/apikey-commands.spec.ts; here, what the built command prints for one.
  it('prints the usage for arguments that are no command, and exits non-zero', async () => {
    const result = await apikey(t.database.url, 'delete', '1');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('Usage: npm run apikey -- <command>');
    expect(result.stdout).toBe('');
  });
});
