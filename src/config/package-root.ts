import { findPackageJSON } from 'node:module';
import { dirname } from 'node:path';

/** The project's root: the directory of the package.json nearest this file (from src/config/ or dist/src/config/). */
export const PACKAGE_ROOT = dirname(findPackageJSON(import.meta.url)!);
