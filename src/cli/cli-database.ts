import { inspect } from 'node:util';
import { DataSource } from 'typeorm';
import { DatabaseConfig, readConfig } from '../config/app-config.js';
import { ConfigError, Problem } from '../config/problem.js';
import { commandDataSourceOptions } from '../database/data-source-options.js';

/** One line for the operator, whatever was thrown (node-postgres' AggregateError has an empty message). */
export function oneLine(error: unknown): string {
  if (error instanceof AggregateError && !error.message) {
    return [...new Set(error.errors.map(oneLine))].join('; ') || 'the connection failed';
  }
  const text = error instanceof Error ? error.message || (error as NodeJS.ErrnoException).code || error.name : error;
  return (typeof text === 'string' ? text : text == null ? '' : inspect(text)).split('\n')[0] || 'an unknown error';
}

/** Where a database URL points, without its password. */
export const describeDatabase = ({ hostname, port, pathname }: URL) => `${hostname}:${port || 5432}${pathname}`;

export const when = (date: Date | null) => (date ? date.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-');

export type CommandOutput = Record<'out' | 'err', (line: string) => void>;

/** Results on stdout (so they can be captured, e.g. a new key alone), everything said to the operator on stderr. */
export const terminal: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

interface DatabaseCommand<C> {
  /** Names the command in its one-line failure message (`apikey failed: …`). */
  name: string;
  usage: string;
  /** The command; a Problem with the arguments, printed alone; or null, answered with the usage. */
  parse(args: string[]): C | Problem | null;
  run(command: C, dataSource: DataSource, config: DatabaseConfig): Promise<number>;
}

/** Every database command's frame: usage or problem (exit 2), DATABASE_URL required, one line on failure (exit 1). */
export function runDatabaseCommand<C>(command: DatabaseCommand<C>): void {
  const main = async (): Promise<number> => {
    const parsed = command.parse(process.argv.slice(2));
    if (!parsed || parsed instanceof Problem) {
      terminal.err(parsed instanceof Problem ? parsed.message : command.usage);
      return 2;
    }
    const config = await readConfig('database');
    const dataSource = new DataSource(commandDataSourceOptions(config.databaseUrl));
    try {
      await dataSource.initialize().catch((error: unknown) => {
        throw new Error(
          `${oneLine(error)} (DATABASE_URL points at ${describeDatabase(new URL(config.databaseUrl))}): start that PostgreSQL or correct DATABASE_URL (in development, npm run apikey and npm run migration:* without it use the embedded one).`,
          { cause: error },
        );
      });
      return await command.run(parsed, dataSource, config);
    } finally {
      if (dataSource.isInitialized) await dataSource.destroy();
    }
  };
  // Exits when done: a database server started for the command (by `npm run`) must not keep it running.
  void main()
    .catch((error: unknown) => {
      const failed = error instanceof ConfigError ? 'Invalid configuration' : `${command.name} failed`;
      terminal.err(`${failed}: ${oneLine(error)}`);
      return 1;
    })
    .then((code) => process.exit(code));
}
