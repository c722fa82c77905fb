import { inspect } from 'node:util';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { openEmbeddedDatabase } from '../database/embedded-postgres.js';

/** DATABASE_URL, or the embedded cluster under DATA_DIR: the running one, else started for this command. */
export async function openCliDatabase(config: AppConfig): Promise<{ url: string; close(): Promise<void> }> {
  if (config.databaseUrl) return { url: config.databaseUrl, close: () => Promise.resolve() };
  return openEmbeddedDatabase({ dataDir: config.dataDir, port: config.embeddedPostgresPort });
}

/** One line for the operator, whatever was thrown (node-postgres' AggregateError has an empty message). */
export function oneLine(error: unknown): string {
  if (error instanceof AggregateError && !error.message) {
    return [...new Set(error.errors.map(oneLine))].join('; ') || 'the connection failed';
  }
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return (error.message || code || error.name).split('\n')[0];
  }
  if (error === undefined || error === null) return 'an unknown error';
  const text = typeof error === 'string' ? error : inspect(error);
  return text === '' ? 'an unknown error' : text.split('\n')[0];
}

/** Connects `dataSource`; a failure names the database tried (never its password) and what to set. */
export async function connect(dataSource: DataSource, config: AppConfig): Promise<void> {
  try {
    await dataSource.initialize();
  } catch (error) {
    if (!config.databaseUrl) throw error;
    const url = new URL(config.databaseUrl);
    throw new Error(
      `${oneLine(error)} (DATABASE_URL points at ${url.hostname}:${url.port || 5432}${url.pathname}): start that PostgreSQL, correct DATABASE_URL, or unset it to use the embedded one under DATA_DIR.`,
      { cause: error },
    );
  }
}
