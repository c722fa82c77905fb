import type { ApiKeySummary, ApiKeysRepository } from '../auth/api-keys/api-keys.repository.js';
import { generateApiKey, publicPrefix } from '../auth/api-keys/api-key-format.js';
import { keyDigest } from '../auth/key-digest.js';
import type { CommandOutput } from './cli-database.js';

export const USAGE = `Usage: npm run apikey -- <command>

Commands:
  create <name>          issue a new key for <name>; the key is printed once, on its own line
  list                   show every key: id, name, prefix, created, last used, revoked
  revoke <id|prefix>     revoke a key; every instance refuses it within seconds
`;

export type ApiKeyCommand =
  { command: 'create'; name: string } | { command: 'list' } | { command: 'revoke'; reference: string };

const NAME = /^[^\p{Cc}]{1,100}$/u;

/** The command the arguments ask for, or null when they are not valid (the caller prints USAGE). */
export function parseArguments(args: readonly string[]): ApiKeyCommand | null {
  const [command, ...rest] = args;
  if (command === 'create' && rest.length === 1 && NAME.test(rest[0].trim())) {
    return { command, name: rest[0].trim() };
  }
  if (command === 'list' && rest.length === 0) return { command };
  if (command === 'revoke' && rest.length === 1 && rest[0].trim() !== '') {
    return { command, reference: rest[0].trim() };
  }
  return null;
}

const when = (date: Date | null) => (date ? date.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-');

function table(keys: readonly ApiKeySummary[]): string[] {
  const rows = [
    ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'],
    ...keys.map((key) => [
      key.id,
      key.name,
      key.prefix,
      when(key.createdAt),
      when(key.lastUsedAt),
      when(key.revokedAt),
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

/** Runs one command against the repository; resolves to the process exit code. */
export async function runCommand(
  command: ApiKeyCommand,
  keys: ApiKeysRepository,
  output: CommandOutput,
): Promise<number> {
  switch (command.command) {
    case 'create': {
      const key = generateApiKey();
      const created = await keys.insert({ name: command.name, prefix: publicPrefix(key), digest: keyDigest(key) });
      output.err(`Created API key ${created.id} "${created.name}" (prefix ${created.prefix}).`);
      output.err('Store it now: it is shown only this once.');
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
      const found = await keys.findByReference(command.reference);
      if (found.length === 0) {
        output.err(`No API key has the id or prefix "${command.reference}".`);
        return 1;
      }
      if (found.length > 1) {
        output.err(
          `Several keys share the prefix "${command.reference}" (ids ${found.map((key) => key.id).join(', ')}): revoke by id.`,
        );
        return 1;
      }
      const revoked = await keys.revoke(found[0].id);
      output.out(
        `Revoked API key ${revoked.id} "${revoked.name}" (prefix ${revoked.prefix}) at ${when(revoked.revokedAt)}.`,
      );
      return 0;
    }
  }
}
