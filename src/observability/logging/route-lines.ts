import type { LoggerService } from '@nestjs/common';

/**
 * Nest's start-up lines name each controller with the global prefix even when its routes are excluded from it
 * (`HealthController {/v1/health}`, served at /health/…). Those headings (context `RoutesResolver`) are dropped;
 * the `Mapped {/health/live, GET} route` lines that follow them name the real paths and are kept.
 */
export function withoutControllerHeadings(logger: LoggerService): LoggerService {
  const untrue = (params: unknown[]) => params[params.length - 1] === 'RoutesResolver';
  return {
    log: (message: unknown, ...params: unknown[]) => {
      if (!untrue(params)) logger.log(message, ...params);
    },
    error: (message: unknown, ...params: unknown[]) => void logger.error(message, ...params),
    warn: (message: unknown, ...params: unknown[]) => void logger.warn(message, ...params),
    debug: (message: unknown, ...params: unknown[]) => void logger.debug?.(message, ...params),
    verbose: (message: unknown, ...params: unknown[]) => void logger.verbose?.(message, ...params),
    fatal: (message: unknown, ...params: unknown[]) => void logger.fatal?.(message, ...params),
    setLogLevels: (levels) => void logger.setLogLevels?.(levels),
  };
}
