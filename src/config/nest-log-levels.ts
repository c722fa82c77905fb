import type { LogLevel as NestLogLevel } from '@nestjs/common';
import type { LogLevel } from './app-config.js';

const SEVERITY: readonly [LogLevel, NestLogLevel][] = [
  ['fatal', 'fatal'],
  ['error', 'error'],
  ['warn', 'warn'],
  ['info', 'log'],
  ['debug', 'debug'],
  ['trace', 'verbose'],
];

/** The Nest logger levels `LOG_LEVEL` enables: itself and everything more severe. */
export function nestLogLevels(level: LogLevel): NestLogLevel[] {
  const last = SEVERITY.findIndex(([name]) => name === level);
  return SEVERITY.slice(0, last + 1).map(([, nest]) => nest);
}
