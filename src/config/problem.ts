/** A problem the person running the service or a command can fix: the entry points print its one line and exit 1. */
export class Problem extends Error {}

/** A refused environment variable: printed after `Invalid configuration: `. */
export class ConfigError extends Problem {}
