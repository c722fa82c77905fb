import { DEFAULT_OVERLAP_MS, parseArguments } from './apikey-commands.js';
import { Problem } from '../config/problem.js';
import { parseDuration } from './duration.js';

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

  it('reads create without options as a key with every scope that never expires', () => {
    expect(parseArguments(['create', 'Acme shop'])).toEqual({
      command: 'create',
      name: 'Acme shop',
      scopes: null,
      expiresInMs: null,
    });
  });

  it('reads rotate with the default overlap of 24 h, or the one given', () => {
    expect(DEFAULT_OVERLAP_MS).toBe(86_400_000);
    expect(parseArguments(['rotate', 'pet_3TBdCCmB'])).toEqual({
      command: 'rotate',
      reference: 'pet_3TBdCCmB',
      overlapMs: DEFAULT_OVERLAP_MS,
    });
    expect(parseArguments(['rotate', '7', '--overlap', '10s'])).toEqual({
      command: 'rotate',
      reference: '7',
      overlapMs: 10_000,
    });
  });

  it.each([
    [['create', 'x', '--scopes', 'pets:delete'], 'Unknown scope "pets:delete": use pets:read, pets:write or both'],
    [['create', 'x', '--scopes', 'pets:read,'], '--scopes needs at least one scope'],
    [['create', 'x', '--scopes'], '--scopes needs a value'],
    [['create', 'x', '--expires-in', '1w'], 'Invalid duration "1w" for --expires-in: use a whole number above 0'],
    [['create', 'x', '--expires-in', '0d'], 'Invalid duration "0d" for --expires-in'],
    [['create', 'x', '--expires-in', '-1h'], 'Invalid duration "-1h" for --expires-in'],
    [['rotate', '1', '--overlap', '1.5h'], 'Invalid duration "1.5h" for --overlap'],
    [['rotate', '1', '--overlap', '3651d'], 'at most 3650d'],
    [['rotate', '1', '--scopes', 'pets:read'], 'Unknown option --scopes for rotate: it takes --overlap'],
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
