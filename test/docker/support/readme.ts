import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './docker.js';

/** One command of a README shell block, with the comment lines printed under it (what it answers). */
export interface ReadmeCommand {
  command: string;
  expected: string[];
}

/** The commands of the README's shell block containing `marker` (continuation lines joined). */
export async function readmeCommands(marker: string): Promise<ReadmeCommand[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]).find((b) => b.includes(marker));
  if (!block) throw new Error(`no sh block in README.md contains ${marker}`);
  const commands: ReadmeCommand[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    if (pending) {
      pending += `\n${line}`;
    } else if (line.startsWith('#')) {
      commands.at(-1)?.expected.push(line.replace(/^#\s?/, ''));
      continue;
    } else if (line.trim() === '') {
      continue;
    } else {
      pending = line;
    }
    if (!pending.endsWith('\\')) {
      commands.push({ command: pending, expected: [] });
      pending = '';
    }
  }
  return commands;
}

/** What `curl -s -i` printed: the status, the headers (lower-case names) and the body. */
export function parseCurlInclude(output: string): { status: number; headers: Record<string, string>; body: string } {
  const [head, ...rest] = output.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}
