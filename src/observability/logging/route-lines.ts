import type { LoggerService } from '@nestjs/common';

/**
 * Nest's start-up headings (context `RoutesResolver`) name each controller with the global prefix even when its
 * routes are excluded from it (`HealthController {/v1/health}`): they are dropped; the `Mapped {/health/live, GET}
 * route` lines name the real paths and are kept. Every other method is the logger's own.
 */
export function withoutControllerHeadings(logger: LoggerService): LoggerService {
  const filtered = Object.create(logger) as LoggerService;
  filtered.log = (message: unknown, ...params: unknown[]) => {
    if (params[params.length - 1] !== 'RoutesResolver') logger.log(message, ...params);
  };
  return filtered;
}
