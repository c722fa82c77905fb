import type { DatabaseServer } from './database-server.js';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { databaseServer?: DatabaseServer }).databaseServer?.stop();
}
