import type { Params } from 'nestjs-pino';
import { stdSerializers } from 'pino';
import type { Options } from 'pino-http';
import pretty from 'pino-pretty';
import type { AppConfig } from '../config/app-config.js';
import { secretScrubber } from './secret-scrubber.js';

/**
 * nestjs-pino's settings: JSON lines in production, pretty lines otherwise,
 * at LOG_LEVEL. pino-http only provides the request context (every log made
 * while serving a request carries its `reqId`); the one line per request is
 * written by RequestLogHook, which knows the route and the caller.
 */
export function loggerParams(config: Pick<AppConfig, 'logLevel' | 'production' | 'apiKeys' | 'metricsToken'>): Params {
  const secrets = config.metricsToken ? [...config.apiKeys, config.metricsToken] : config.apiKeys;
  const options: Options = {
    level: config.logLevel,
    autoLogging: false,
    quietReqLogger: true,
    // No request serialization at all: headers (Authorization among them) never reach a log.
    wrapSerializers: false,
    serializers: { req: () => undefined, res: () => undefined, err: stdSerializers.err },
    hooks: { streamWrite: secretScrubber(secrets) },
  };
  if (config.production || config.logLevel === 'silent') return { pinoHttp: options };
  return { pinoHttp: [options, pretty({ colorize: process.stdout.isTTY, sync: true })] };
}
