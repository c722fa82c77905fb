/** Why the embedded database cannot be used, in one line for the operator (printed without a stack). */
export class EmbeddedPostgresError extends Error {}
