import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Registry } from 'prom-client';
import { Public } from '../../auth/public.decorator.js';
import { OPERATIONS_ROUTES } from '../operations-routes.js';
import { MetricsTokenGuard } from './metrics-token.strategy.js';

/** Prometheus scrape endpoint: no API key, its own optional METRICS_TOKEN instead. */
@ApiExcludeController()
@Public()
@UseGuards(MetricsTokenGuard)
@Controller()
export class MetricsController {
  constructor(private readonly registry: Registry) {}

  @Get(OPERATIONS_ROUTES.metrics)
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
