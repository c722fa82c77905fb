import { parseArgs } from 'node:util';
import type { ApiKeySummary, ApiKeysRepository } from '../auth/api-keys/api-keys.repository.js';
import { generateApiKey, publicPrefix } from '../auth/api-keys/api-key-format.js';
import { API_KEY_SCOPES, type ApiKeyScope, parseScopes } from '../auth/api-key-scope.js';
import { keyDigest } from '../auth/key-digest.js';
import { Problem } from '../config/problem.js';
import { type CommandOutput, when } from './cli-database.js';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export const DEFAULT_OVERLAP_MS = 24 * UNIT_MS.h;

/** At most ten years: past that a duration is a typo, and PostgreSQL's timestamps would still hold it. */
export function parseDuration(option: string, text: string): number | Problem {
  const match = /^([1-9]\d{0,5})([smhd])$/.exec(text);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : NaN;
  if (ms <= 3_650 * UNIT_MS.d) return ms;
  return new Problem(
    `Invalid duration "${text}" for ${option}: use a whole number above 0 followed by s, m, h or d (e.g. 90d, 12h, 10s), at most 3650d.`,
  );
}

export const USAGE = `Usage: npm run apikey -- <command>

Commands:
  create <name> [--scopes <${API_KEY_SCOPES.join('|')}>[,...]] [--expires-in <N>{s|m|h|d}]
                         issue a new key for <name>; the key is printed once, on its own line. Without --scopes it
                         may do everything; without --expires-in it never expires
  rotate <id|prefix> [--overlap <N>{s|m|h|d}] [--expires-in <N>{s|m|h|d}]
                         issue a new key with the same name and scopes, printed once; it keeps the old key's expiry,
                         or expires after --expires-in (a key that expires soon needs it; never shorter than the overlap). The old key keeps working
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

/** Each command's options: each takes a value, repeatable so that a repeated one is refused rather than lost. */
const OPTIONS = { create: ['scopes', 'expires-in'], rotate: ['overlap', 'expires-in'], list: [], revoke: [] };

const needsValue = (option: string) =>
  new Problem(`${option} needs a value: ${option === '--scopes' ? '--scopes pets:read' : `${option} 30d`}.`);

/** The command the arguments ask for; a Problem for a bad scope, duration or option; null for USAGE. */
export function parseArguments([command = '', ...rest]: readonly string[]): ApiKeyCommand | Problem | null {
  if (!Object.hasOwn(OPTIONS, command)) return null;
  const names: string[] = OPTIONS[command as keyof typeof OPTIONS];
  const options = Object.fromEntries(names.map((name) => [name, { type: 'string', multiple: true } as const]));
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  } catch (error) {
    // Node names the option in its message only: `Unknown option '--all'. …`, `Option '--scopes <value>' …`.
    const { code, message } = error as NodeJS.ErrnoException;
    const option = /'(-[^' ]*)/.exec(message)?.[1] ?? 'given';
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return needsValue(option);
    if (code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw error;
    return new Problem(
      `Unknown option ${option} for ${command}: it takes ${names.map((name) => `--${name}`).join(' and ') || 'none'} (npm run apikey alone shows the usage).`,
    );
  }
  const values: Record<string, string> = {};
  for (const [name, [value, ...again]] of Object.entries(parsed.values) as [string, string[]][]) {
    if (again.length > 0) return new Problem(`--${name} is given twice: give it once.`);
    if (value === '') return needsValue(`--${name}`);
    values[name] = value;
  }
  if (command === 'list') return parsed.positionals.length === 0 ? { command } : null;
  const [argument, ...extra] = parsed.positionals.map((positional) => positional.trim());
  if (!argument || extra.length > 0) return null;
  const scopes = 'scopes' in values ? parseScopes(values.scopes) : null;
  const overlapMs = 'overlap' in values ? parseDuration('--overlap', values.overlap) : DEFAULT_OVERLAP_MS;
  const expiresInMs = 'expires-in' in values ? parseDuration('--expires-in', values['expires-in']) : null;
  if (scopes instanceof Problem) return scopes;
  if (overlapMs instanceof Problem) return overlapMs;
  if (expiresInMs instanceof Problem) return expiresInMs;
  if (command === 'create')
    return /^[^\p{Cc}]{1,100}$/u.test(argument) ? { command, name: argument, scopes, expiresInMs } : null;
  if (command === 'revoke') return { command, reference: argument };
  if (expiresInMs !== null && expiresInMs < overlapMs) {
    // The new key would expire while the old one still works, and neither could then be rotated: the lineage ends.
    const overlap =
      'overlap' in values ? `--overlap ${values.overlap}` : `the default overlap of ${DEFAULT_OVERLAP_MS / UNIT_MS.h}h`;
    return new Problem(
      `--expires-in ${values['expires-in']} is shorter than ${overlap}: the new key would expire before the old one stops working. Give --expires-in at least the overlap (e.g. --expires-in 90d), or a shorter --overlap.`,
    );
  }
  return { command: 'rotate', reference: argument, overlapMs, expiresInMs };
}

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

function whyNotRotated(key: ApiKeySummary, replacement: ApiKeySummary | null): string {
  const named = `API key ${key.id} "${key.name}"`;
  if (key.state === 'revoked' || !replacement) {
    const ended =
      key.state === 'revoked' ? `was revoked at ${when(key.revokedAt)}` : `expired at ${when(key.expiresAt)}`;
    return `${named} ${ended}, so it cannot be rotated: issue a new key with create.`;
  }
  const replaced = `${named} was replaced by key ${replacement.id} at ${when(replacement.createdAt)}`;
  if (replacement.state === 'revoked' || replacement.state === 'expired') {
    return `${replaced}, which is now ${replacement.state}: issue a new key with create, or revoke ${key.id}.`;
  }
  return key.state === 'expired'
    ? `${replaced} and expired at ${when(key.expiresAt)}: rotate ${replacement.id} instead.`
    : `${replaced}: rotate ${replacement.id}, or revoke ${key.id}.`;
}

/** A new key, and what is stored of it: the key itself is printed once and kept nowhere. */
function newKey() {
  const key = generateApiKey();
  return { key, prefix: publicPrefix(key), digest: keyDigest(key) };
}

export async function runCommand(
  command: ApiKeyCommand,
  keys: ApiKeysRepository,
  output: CommandOutput,
): Promise<number> {
  switch (command.command) {
    case 'create': {
      const { key, ...stored } = newKey();
      const { name, scopes, expiresInMs } = command;
      const created = await keys.insert({ ...stored, name, scopes, expiresInMs });
      output.err(`Created ${describe(created)}.`);
      output.err('Store it now: it is shown only this once.');
      output.out(key);
      return 0;
    }
    case 'rotate': {
      const found = await findOne(keys, command.reference, 'rotate', output);
      if (!found) return 1;
      const { key, ...stored } = newKey();
      const rotation = await keys.rotate(found.id, command.overlapMs, { ...stored, expiresInMs: command.expiresInMs });
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
