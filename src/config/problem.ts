/**
 * A problem the person running the service or a command can fix, in one line that says what is wrong and what to
 * do: the entry points print its message alone, never a stack, and exit non-zero.
 */
export class Problem extends Error {}

/** A refused environment variable: the entry points print it after `Invalid configuration: ` and exit 1. */
export class ConfigError extends Problem {}
