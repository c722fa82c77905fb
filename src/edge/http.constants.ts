/** The versioned API's path prefix: every product route lives under `/v1`. */
export const API_PREFIX = 'v1';

/** Where Swagger UI and the OpenAPI document are served, outside the versioned API. */
export const DOCS_PATH = 'docs';

/** The realm of the API's bearer challenges (`WWW-Authenticate: Bearer realm="animal-store"`, RFC 6750). */
export const REALM = 'animal-store';

/** The largest request body accepted; larger ones get a 413 `payload_too_large`. */
export const BODY_LIMIT_BYTES = 16 * 1024;
