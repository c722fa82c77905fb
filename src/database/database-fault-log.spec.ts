import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { DATABASE_FAULT_LOG_INTERVAL_MS, DatabaseFaultLog } from './database-fault-log.js';
import { databaseFault, FAULT_CLASSES, POOL_FULL_CLASS } from './database-faults.js';

const readOnly = databaseFault({ code: '25006', message: 'cannot execute INSERT in a read-only transaction' })!;
const diskFull = databaseFault({ code: '53100', message: 'could not extend file "base/16384/16390": No space left' })!;

describe('DatabaseFaultLog', () => {
  let warned: jest.SpiedFunction<Logger['warn']>;
  let registry: Registry;
  let log: DatabaseFaultLog;

  beforeEach(() => {
    jest.useFakeTimers();
    warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    registry = new Registry();
    log = new DatabaseFaultLog(registry);
  });

  afterEach(() => {
    log.onApplicationShutdown();
    warned.mockRestore();
    jest.useRealTimers();
  });

  const lines = () => warned.mock.calls.map(([fields]) => fields as Record<string, unknown>);
  const counted = async (): Promise<Record<string, number>> => {
    const metric = await registry.getSingleMetric('animal_store_database_faults_total')!.get();
    return Object.fromEntries(metric.values.map(({ labels, value }) => [String(labels.sqlstate_class), value]));
  };

  it('serves every class at 0 from the start, so that a first burst of faults shows in rate()', async () => {
    expect(await counted()).toEqual(Object.fromEntries(FAULT_CLASSES.map((sqlClass) => [sqlClass, 0])));
  });

  it('writes one line when a kind first fails a request, then one per interval with the count, and counts each', async () => {
    for (let i = 0; i < 500; i += 1) log.record(readOnly);
    expect(lines()).toEqual([{ sqlstate: '25006', sqlClass: '25', postgresMessage: readOnly.message, failures: 1 }]);
    expect(warned.mock.calls[0][1]).toMatch(/^Database fault 25006 \(read-only database\): "cannot execute INSERT/);

    jest.advanceTimersByTime(DATABASE_FAULT_LOG_INTERVAL_MS);
    expect(lines().map((line) => line.failures)).toEqual([1, 499]);
    expect(await counted()).toMatchObject({ '25': 500, '08': 0, [POOL_FULL_CLASS]: 0 });
  });

  it('keeps kinds apart, and ends a series after a quiet interval (the next fault is logged at once)', () => {
    log.record(readOnly);
    log.record(diskFull);
    log.record(diskFull);
    expect(lines().map((line) => line.sqlstate)).toEqual(['25006', '53100']);

    jest.advanceTimersByTime(DATABASE_FAULT_LOG_INTERVAL_MS);
    expect(lines().map((line) => [line.sqlstate, line.failures])).toEqual([
      ['25006', 1],
      ['53100', 1],
      ['53100', 1],
    ]);
    jest.advanceTimersByTime(DATABASE_FAULT_LOG_INTERVAL_MS * 3);
    expect(lines()).toHaveLength(3);

    log.record(readOnly);
    expect(lines()).toHaveLength(4);
  });

  it('writes what it still holds when the application shuts down', () => {
    log.record(readOnly);
    log.record(readOnly);
    log.record(readOnly);
    log.onApplicationShutdown();
    expect(lines().map((line) => line.failures)).toEqual([1, 2]);
  });
});
