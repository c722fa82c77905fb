// Written by `npm run migration:generate` and `npm run migration:create` from the files of this folder.
import { CreatePets1795300000000 } from './1795300000000-CreatePets.js';
import { CreateIdempotencyKeys1795300000001 } from './1795300000001-CreateIdempotencyKeys.js';
import { CreateApiKeys1795400000000 } from './1795400000000-CreateApiKeys.js';
import { AddApiKeyScopesAndExpiry1795626106405 } from './1795626106405-AddApiKeyScopesAndExpiry.js';
import { AddApiKeyLineage1795715030449 } from './1795715030449-AddApiKeyLineage.js';
import { AddApiKeyExpiryIndex1796000000000 } from './1796000000000-AddApiKeyExpiryIndex.js';
import { SetApiKeysFillfactor1796000000001 } from './1796000000001-SetApiKeysFillfactor.js';

/**
 * Every migration, in order. Imported rather than globbed from disk, so every build (`nest build`,
 * `nest start --watch`, the image) carries exactly the migrations it was compiled with; a file missing from
 * this list fails `migrations/index.spec.ts`.
 */
export const MIGRATIONS = [
  CreatePets1795300000000,
  CreateIdempotencyKeys1795300000001,
  CreateApiKeys1795400000000,
  AddApiKeyScopesAndExpiry1795626106405,
  AddApiKeyLineage1795715030449,
  AddApiKeyExpiryIndex1796000000000,
  SetApiKeysFillfactor1796000000001,
];
