/** The versioned API's path prefix: every product route lives under `/v1`. */
export const API_PREFIX = 'v1';

/** Where Swagger UI and the OpenAPI document are served, outside the versioned API. */
export const DOCS_PATH = 'docs';

/** The largest request body accepted; larger ones get a 413 `payload_too_large`. */
export const BODY_LIMIT_BYTES = 16 * 1024;
