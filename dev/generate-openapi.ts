import { writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { buildOpenApiDocument, OPENAPI_FILE, serializeOpenApiDocument } from './build-openapi-document.js';

/** `npm run openapi`: writes the committed `openapi.json`; no database is started or needed. */
const document = await buildOpenApiDocument();
await writeFile(OPENAPI_FILE, serializeOpenApiDocument(document));
const paths = Object.keys(document.paths).length;
process.stdout.write(`Wrote ${relative(process.cwd(), OPENAPI_FILE)} (OpenAPI ${document.openapi}, ${paths} paths)\n`);
