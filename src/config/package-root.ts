import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The project's root: the nearest directory above this file that holds package.json (from src/config/ or dist/src/config/). */
export const PACKAGE_ROOT = nearestPackage(import.meta.dirname);

function nearestPackage(directory: string): string {
  if (existsSync(join(directory, 'package.json')) || directory === dirname(directory)) return directory;
  return nearestPackage(dirname(directory));
}
