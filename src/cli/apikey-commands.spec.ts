import type { ApiKeySummary, ApiKeysRepository, RotationOutcome } from '../auth/api-keys/api-keys.repository.js';
import { DEFAULT_OVERLAP_MS, parseArguments, parseDuration, runCommand } from './apikey-commands.js';
import { Problem } from '../config/problem.js';

const problemOf = (args: string[]) => {
  const parsed = parseArguments(args);
  expect(parsed).toBeInstanceOf(Problem);
  return (parsed as Problem).message;
};

describe('parseArguments', () => {
  it('reads create with scopes and an expiry, in either option form', () => {
    expect(parseArguments(['create', 'storefront', '--scopes', 'pets:read', '--expires-in', '30d'])).toEqual({
      command: 'create',
      name: 'storefront',
      scopes: ['pets:read'],
      expiresInMs: 30 * 86_400_000,
    });
    expect(parseArguments(['create', '--scopes=pets:write,pets:read,pets:write', 'sync'])).toEqual({
      command: 'create',
      name: 'sync',
      scopes: ['pets:write', 'pets:read'],
      expiresInMs: null,
    });
  });

  it('reads a name that starts with a dash after --', () => {
    expect(parseArguments(['create', '--', '-1'])).toMatchObject({ command: 'create', name: '-1' });
  });

  it('reads create without options as a key with every scope that never expires', () => {
    expect(parseArguments(['create', 'Acme shop'])).toEqual({
      command: 'create',
      name: 'Acme shop',
      scopes: null,
      expiresInMs: null,
    });
  });

  it('reads rotate with the default overlap of 24 h, or the one given, and the old expiry or a new lifetime', () => {
    expect(DEFAULT_OVERLAP_MS).toBe(86_400_000);
    expect(parseArguments(['rotate', 'pet_3TBdCCmB'])).toEqual({
      command: 'rotate',
      reference: 'pet_3TBdCCmB',
      overlapMs: DEFAULT_OVERLAP_MS,
      expiresInMs: null,
    });
    expect(parseArguments(['rotate', '7', '--overlap', '10s', '--expires-in', '90d'])).toEqual({
      command: 'rotate',
      reference: '7',
      overlapMs: 10_000,
      expiresInMs: 90 * 86_400_000,
    });
  });

  it.each([
    [['create', 'x', '--scopes', 'pets:delete'], 'Unknown scope "pets:delete": use pets:read, pets:write or both'],
    [['create', 'x', '--scopes', 'read'], 'Unknown scope "read"'],
    [['create', 'x', '--scopes', 'pets:read,'], '--scopes needs at least one scope'],
    [['create', 'x', '--scopes'], '--scopes needs a value'],
    [['create', 'x', '--expires-in', '1w'], 'Invalid duration "1w" for --expires-in: use a whole number above 0'],
    [['create', 'x', '--expires-in', '0d'], 'Invalid duration "0d" for --expires-in'],
    [['create', 'x', '--expires-in', '0s'], 'Invalid duration "0s" for --expires-in'],
    [['create', 'x', '--expires-in'], '--expires-in needs a value'],
    [['create', 'x', '--expires-in=-1h'], 'Invalid duration "-1h" for --expires-in'],
    [['create', 'x', '--expires-in', '-1h'], '--expires-in needs a value: --expires-in 30d'],
    [['create', 'x', '--scopes='], '--scopes needs a value: --scopes pets:read'],
    [['create', '-x'], 'Unknown option -x for create: it takes --scopes and --expires-in'],
    [['rotate', '1', '--overlap', '1.5h'], 'Invalid duration "1.5h" for --overlap'],
    [['rotate', '1', '--overlap', 'soon'], 'Invalid duration "soon" for --overlap'],
    [['rotate', '1', '--overlap', '3651d'], 'at most 3650d'],
    [
      ['rotate', '1', '--scopes', 'pets:read'],
      'Unknown option --scopes for rotate: it takes --overlap and --expires-in',
    ],
    [['rotate', '1', '--expires-in', '2w'], 'Invalid duration "2w" for --expires-in'],
    [['list', '--expires-in', '1d'], 'Unknown option --expires-in for list: it takes none'],
    [['list', '--all'], 'Unknown option --all for list: it takes none'],
    [['create', 'x', '--scopes', 'pets:read', '--scopes', 'pets:write'], '--scopes is given twice'],
  ])('answers %j with one line saying what is wrong and what is allowed', (args, says) => {
    const problem = problemOf(args);
    expect(problem).toContain(says);
    expect(problem).not.toContain('\n');
  });

  it.each([[[]], [['create']], [['create', 'a', 'b']], [['delete', '1']], [['rotate']], [['list', 'x']]])(
    'answers %j, which is not a command, with null (the usage)',
    (args) => {
      expect(parseArguments(args)).toBeNull();
    },
  );
});

describe('parseDuration', () => {
  it.each([
    ['10s', 10_000],
    ['5m', 300_000],
    ['12h', 43_200_000],
    ['90d', 7_776_000_000],
    ['3650d', 315_360_000_000],
  ])('reads %s', (text, ms) => {
    expect(parseDuration('--overlap', text)).toBe(ms);
  });

  it.each([['10'], ['s'], ['10 s'], ['10S'], ['1e3s'], ['010s'], ['']])('refuses %j', (text) => {
    const parsed = parseDuration('--overlap', text);
    expect(typeof parsed === 'number' ? parsed : parsed.message).toContain(`Invalid duration "${text}" for --overlap`);
  });
});

describe('rotate --expires-in below the overlap', () => {
  it.each([
    [['--expires-in', '1s', '--overlap', '24h'], '--expires-in 1s is shorter than --overlap 24h'],
    [['--expires-in', '30m'], '--expires-in 30m is shorter than the default overlap of 24h'],
  ])('refuses %j, naming both values and what to do', (options, start) => {
    const message = problemOf(['rotate', '6', ...options]);
    expect(message).toMatch(new RegExp(`^${start}: .*Give --expires-in at least the overlap`));
  });

  it('takes an expiry equal to the overlap', () => {
    expect(parseArguments(['rotate', '6', '--expires-in', '1d', '--overlap', '24h'])).toEqual({
      command: 'rotate',
      reference: '6',
      overlapMs: 86_400_000,
      expiresInMs: 86_400_000,
    });
  });
});

describe('rotate, for a key it cannot rotate', () => {
  const key = (id: string, fields: Partial<ApiKeySummary>): ApiKeySummary => ({
    id,
    name: 'Acme shop',
    prefix: `pet_${id.padStart(8, '0')}`,
    scopes: null,
    createdAt: new Date('2026-11-20T10:00:00.123Z'),
    lastUsedAt: null,
    expiresAt: null,
    revokedAt: null,
    replacedBy: null,
    state: 'active',
    ...fields,
  });
  const replacement = key('5', { createdAt: new Date('2026-11-26T17:00:00.456Z') });
  const answerFor = async (refused: ApiKeySummary, replacedBy: ApiKeySummary | null) => {
    const outcome: RotationOutcome = { rotated: false, key: refused, replacement: replacedBy };
    const keys = {
      findByReference: () => Promise.resolve([refused]),
      rotate: () => Promise.resolve(outcome),
    } as unknown as ApiKeysRepository;
    const lines = { out: [] as string[], err: [] as string[] };
    const code = await runCommand(
      { command: 'rotate', reference: refused.id, overlapMs: DEFAULT_OVERLAP_MS, expiresInMs: null },
      keys,
      {
        out: (line) => lines.out.push(line),
        err: (line) => lines.err.push(line),
      },
    );
    return { code, ...lines };
  };

  it.each([
    [
      'replaced, in its overlap',
      key('3', { state: 'in overlap', replacedBy: '5', expiresAt: new Date('2026-11-27T17:00:00Z') }),
      replacement,
      'API key 3 "Acme shop" was replaced by key 5 at 2026-11-26T17:00:00Z: rotate 5, or revoke 3.',
    ],
    [
      'replaced, its overlap over',
      key('3', { state: 'expired', replacedBy: '5', expiresAt: new Date('2026-11-27T17:00:00Z') }),
      replacement,
      'API key 3 "Acme shop" was replaced by key 5 at 2026-11-26T17:00:00Z and expired at 2026-11-27T17:00:00Z: rotate 5 instead.',
    ],
    [
      'replaced by a key since revoked',
      key('3', { state: 'in overlap', replacedBy: '5', expiresAt: new Date('2026-11-27T17:00:00Z') }),
      { ...replacement, state: 'revoked' as const, revokedAt: new Date('2026-11-26T18:00:00Z') },
      'API key 3 "Acme shop" was replaced by key 5 at 2026-11-26T17:00:00Z, which is now revoked: issue a new key with create, or revoke 3.',
    ],
    [
      'expired',
      key('3', { state: 'expired', expiresAt: new Date('2026-11-27T17:00:00Z') }),
      null,
      'API key 3 "Acme shop" expired at 2026-11-27T17:00:00Z, so it cannot be rotated: issue a new key with create.',
    ],
    [
      'revoked, though replaced',
      key('3', { state: 'revoked', replacedBy: '5', revokedAt: new Date('2026-11-26T18:00:00Z') }),
      replacement,
      'API key 3 "Acme shop" was revoked at 2026-11-26T18:00:00Z, so it cannot be rotated: issue a new key with create.',
    ],
  ])('answers a key %s with exit 1 and one line saying what to do', async (_case, refused, replacedBy, line) => {
    expect(await answerFor(refused, replacedBy)).toEqual({ code: 1, out: [], err: [line] });
  });
});
