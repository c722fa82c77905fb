import type { DataSource } from 'typeorm';
import { FAULT_CLASSES, POOL_FULL_CLASS } from '../../database/database-faults.js';
import { MetricsService } from './metrics.service.js';

describe('MetricsService database faults', () => {
  const metrics = () => new MetricsService({} as DataSource);
  const faults = async (service: MetricsService): Promise<Record<string, number>> => {
    const metric = await service.registry.getSingleMetric('animal_store_database_faults_total')!.get();
    return Object.fromEntries(metric.values.map(({ labels, value }) => [String(labels.sqlstate_class), value]));
  };

  it('serves every class at 0 from the start, so that a first burst of faults shows in rate()', async () => {
    expect(await faults(metrics())).toEqual(Object.fromEntries(FAULT_CLASSES.map((sqlClass) => [sqlClass, 0])));
  });

  it('counts each fault under its class', async () => {
    const service = metrics();
    service.recordDatabaseFault('08');
    service.recordDatabaseFault('08');
    service.recordDatabaseFault(POOL_FULL_CLASS);
    expect(await faults(service)).toMatchObject({ '08': 2, [POOL_FULL_CLASS]: 1, '57': 0 });
  });
});
