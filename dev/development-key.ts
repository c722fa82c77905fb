import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { API_KEY_PREFIX } from '../src/auth/api-keys/api-key-format.js';

/** Outside production without API_KEYS: one made-up key, in a file only its owner reads, never in a log. */
export async function developmentApiKey(dataDir: string): Promise<{ key: string; file: string }> {
  const file = join(dataDir, 'dev-api-key');
  try {
    return { key: (await readFile(file, 'utf8')).trim(), file };
  } catch {
    const key = `${API_KEY_PREFIX}dev_${randomBytes(24).toString('base64url')}`;
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${key}\n`, { mode: 0o600 });
    return { key, file };
  }
}
