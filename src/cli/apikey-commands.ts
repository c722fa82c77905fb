import { parseArgs } from 'node:util';
import type { ApiKeySummary, ApiKeysRepository } from '../auth/api-keys/api-keys.repository.js';
import { generateApiKey, publicPrefix } from '../auth/api-keys/api-key-format.js';
import { API_KEY_SCOPES, type ApiKeyScope, parseScopes } from '../auth/api-key-scope.js';
import { keyDigest } from '../auth/key-digest.js';
import { Problem } from '../config/problem.js';
import type { CommandOutput } from './cli-database.js';
import { parseDuration } from './duration.js';

/** How long a rotated-out key keeps working when `rotate` is not given `--overlap`. */
export const DEFAULT_OVERLAP_MS = 24 * 3_600_000;

export const USAGE = `Usage: npm run apikey -- <command>

Commands:
  create <name> [--scopes <${API_KEY_SCOPES.join('|')}>[,...]] [--expires-in <N>{s|m|h|d}]
                         issue a new key for <name>; the key is printed once, on its own line. Without --scopes it
                         may do everything; without --expires-in it never expires
  rotate <id|prefix> [--overlap <N>{s|m|h|d}] [--expires-in <N>{s|m|h|d}]
                         issue a new key with the same name and scopes, printed once; it keeps the old key's expiry,
                         or expires after --expires-in (a key that expires soon needs it). The old key keeps working
                         until the overlap ends (default 24h), then expires (never later than it would have).
                         A key is replaced once: to replace it again, rotate its replacement
  list                   show every key: id, name, prefix, scopes, created, last used, expires, revoked, state
                         (active, in overlap, expired, revoked) and the key that replaced it
  revoke <id|prefix>     revoke a key; every instance refuses it within seconds
`;

type ApiKeyCommand =
  | { command: 'create'; name: string; scopes: readonly ApiKeyScope[] | null; expiresInMs: number | null }
  | { command: 'rotate'; reference: string; overlapMs: number; expiresInMs: number | null }
  | { command: 'list' }
  | { command: 'revoke'; reference: string };

const NAME = /^[^\p{Cc}]{1,100}$/u;

const OPTIONS = {
  create: ['--scopes', '--expires-in'],
  rotate: ['--overlap', '--expires-in'],
  list: [],
  revoke: [],
} as const;

/**
 * The command the arguments ask for; a Problem (one line) for a bad scope, duration or option; null when
 * they are not a command at all (the caller prints USAGE). Either way nothing has been done yet.
 */
export function parseArguments(args: readonly string[]): ApiKeyCommand | Problem | null {
  const [command, ...rest] = args;
  if (command !== 'create' && command !== 'rotate' && command !== 'list' && command !== 'revoke') return null;
  const allowed: readonly string[] = OPTIONS[command];
  const { tokens } = parseArgs({
    args: rest,
    options: Object.fromEntries(allowed.map((option) => [option.slice(2), { type: 'string' as const }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  // An argument that does not start with `--` is positional, as `-1` or `-` may be a name; a short option group
  // such as -ab is one argument, read as one token per letter, hence by index.
  const positionals = new Map<number, string>();
  const options = new Map<string, string>();
  for (const token of tokens) {
    const arg = rest[token.index];
    if (token.kind === 'positional' || !arg.startsWith('--')) {
      positionals.set(token.index, arg);
      continue;
    }
    const name = arg.split('=', 1)[0];
    if (token.kind !== 'option' || !allowed.includes(name)) {
      const takes = allowed.length > 0 ? `it takes ${allowed.join(' and ')}` : 'it takes none';
      return new Problem(`Unknown option ${name} for ${command}: ${takes} (npm run apikey alone shows the usage).`);
    }
    if (options.has(name)) return new Problem(`${name} is given twice: give it once.`);
    if (token.value === undefined || token.value === '') {
      return new Problem(`${name} needs a value: ${name === '--scopes' ? '--scopes pets:read' : `${name} 30d`}.`);
    }
    options.set(name, token.value);
  }
  const positional = [...positionals.values()];
  const expiresText = options.get('--expires-in');
  const expiresInMs = expiresText === undefined ? null : parseDuration('--expires-in', expiresText);
  if (command === 'list') return positional.length === 0 ? { command } : null;
  if (positional.length !== 1) return null;
  const argument = positional[0].trim();
  if (command === 'create') {
    if (!NAME.test(argument)) return null;
    const scopesText = options.get('--scopes');
    const scopes = scopesText === undefined ? null : parseScopes(scopesText);
    if (scopes instanceof Problem) return scopes;
    if (expiresInMs !== null && typeof expiresInMs !== 'number') return expiresInMs;
    return { command, name: argument, scopes, expiresInMs };
  }
  if (argument === '') return null;
  if (command === 'rotate') {
    const overlapText = options.get('--overlap');
    const overlapMs = overlapText === undefined ? DEFAULT_OVERLAP_MS : parseDuration('--overlap', overlapText);
    if (typeof overlapMs !== 'number') return overlapMs;
    if (expiresInMs !== null && typeof expiresInMs !== 'number') return expiresInMs;
    return { command, reference: argument, overlapMs, expiresInMs };
  }
  return { command, reference: argument };
}

const when = (date: Date | null) => (date ? date.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-');
/** Null scopes are every scope: keys issued without --scopes, and all keys issued before scopes existed. */
const scopesOf = (key: ApiKeySummary) => (key.scopes === null ? 'all' : key.scopes.join(','));

function table(keys: readonly ApiKeySummary[]): string[] {
  const rows = [
    ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED', 'STATE', 'REPLACED BY'],
    ...keys.map((key) => [
      key.id,
      key.name,
      key.prefix,
      scopesOf(key),
      ...[key.createdAt, key.lastUsedAt, key.expiresAt, key.revokedAt].map(when),
      key.state,
      key.replacedBy ?? '-',
    ]),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd(),
  );
}

/** The one key `reference` (an id or a public prefix) names, or null once it has said why there is none. */
async function findOne(keys: ApiKeysRepository, reference: string, verb: string, output: CommandOutput) {
  const found = await keys.findByReference(reference);
  if (found.length === 1) return found[0];
  output.err(
    found.length === 0
      ? `No API key has the id or prefix "${reference}": give an id or prefix that npm run apikey -- list shows.`
      : `Several keys share the prefix "${reference}" (ids ${found.map((key) => key.id).join(', ')}): ${verb} by id.`,
  );
  return null;
}

const describe = (key: ApiKeySummary) =>
  `API key ${key.id} "${key.name}" (prefix ${key.prefix}, scopes ${scopesOf(key)}, expires ${key.expiresAt ? when(key.expiresAt) : 'never'})`;

/** The one line `rotate` answers for a key it cannot rotate, as it stands now. */
function whyNotRotated(key: ApiKeySummary, replacement: ApiKeySummary | null): string {
  const named = `API key ${key.id} "${key.name}"`;
  if (key.state === 'revoked') {
    return `${named} was revoked at ${when(key.revokedAt)}, so it cannot be rotated: issue a new key with create.`;
  }
  if (replacement) {
    const replaced = `${named} was replaced by key ${replacement.id} at ${when(replacement.createdAt)}`;
    if (replacement.state === 'revoked' || replacement.state === 'expired') {
      return `${replaced}, which is now ${replacement.state}: issue a new key with create, or revoke ${key.id}.`;
    }
    return key.state === 'expired'
      ? `${replaced} and expired at ${when(key.expiresAt)}: rotate ${replacement.id} instead.`
      : `${replaced}: rotate ${replacement.id}, or revoke ${key.id}.`;
  }
  return `${named} expired at ${when(key.expiresAt)}, so it cannot be rotated: issue a new key with create.`;
}

/** Runs one command against the repository; resolves to the process exit code. */
export async function runCommand(
  command: ApiKeyCommand,
  keys: ApiKeysRepository,
  output: CommandOutput,
): Promise<number> {
  switch (command.command) {
    case 'create': {
      const key = generateApiKey();
      const created = await keys.insert({
        name: command.name,
        prefix: publicPrefix(key),
        digest: keyDigest(key),
        scopes: command.scopes,
        expiresInMs: command.expiresInMs,
      });
      output.err(`Created ${describe(created)}.`);
      output.err('Store it now: it is shown only this once.');
      output.out(key);
      return 0;
    }
    case 'rotate': {
      const found = await findOne(keys, command.reference, 'rotate', output);
      if (!found) return 1;
      const key = generateApiKey();
      const rotation = await keys.rotate(found.id, command.overlapMs, {
        prefix: publicPrefix(key),
        digest: keyDigest(key),
        expiresInMs: command.expiresInMs,
      });
      if (!rotation.rotated) {
        output.err(whyNotRotated(rotation.key, rotation.replacement));
        return 1;
      }
      output.err(`Created ${describe(rotation.created)} to replace API key ${rotation.old.id}.`);
      output.err(
        `The old key (prefix ${rotation.old.prefix}) keeps working until ${when(rotation.old.expiresAt)}, then expires: hand its clients the new key before then.`,
      );
      output.err('Store the new key now: it is shown only this once.');
      output.out(key);
      return 0;
    }
    case 'list': {
      const all = await keys.findAll();
      if (all.length === 0) output.err('No API keys yet: create one with `npm run apikey -- create <name>`.');
      else table(all).forEach((line) => output.out(line));
      return 0;
    }
    case 'revoke': {
      const found = await findOne(keys, command.reference, 'revoke', output);
      if (!found) return 1;
      const revoked = await keys.revoke(found.id);
      output.out(
        `Revoked API key ${revoked.id} "${revoked.name}" (prefix ${revoked.prefix}) at ${when(revoked.revokedAt)}.`,
      );
      return 0;
    }
  }
}
