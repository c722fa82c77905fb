import type { LoggerService } from '@nestjs/common';

/**
 * Drops Nest's start-up headings (context `RoutesResolver`), which name each controller with the global prefix even
 * when its routes are excluded from it (`HealthController {/v1/health}`); the `Mapped {…} route` lines are kept.
 */
export function withoutControllerHeadings(logger: LoggerService): LoggerService {
  const filtered = Object.create(logger) as LoggerService;
  filtered.log = (message: unknown, ...params: unknown[]) => {
    if (params[params.length - 1] !== 'RoutesResolver') logger.log(message, ...params);
  };
  return filtered;
}
