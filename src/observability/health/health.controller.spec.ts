import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { ReadinessLog } from './health.controller.js';

describe('ReadinessLog', () => {
  let lines: string[];
  beforeEach(() => {
    lines = [];
    jest
      .spyOn(Logger.prototype, 'log')
      .mockImplementation((message: unknown) => void lines.push(`log ${String(message)}`));
    jest
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((message: unknown) => void lines.push(`warn ${String(message)}`));
    jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void lines.push(`error ${String(message)}`));
  });
  afterEach(() => jest.restoreAllMocks());

  it('logs one line per change of readiness, none for probes that change nothing', () => {
    const log = new ReadinessLog();
    const up = { database: { status: 'up' as const } };
    const timedOut = { database: { status: 'down' as const, message: 'timeout of 1000ms exceeded' } };
    const pending = { migrations: { status: 'down' as const, message: '1 pending migration(s)' } };
    log.record(up);
    log.record(up);
    for (let probe = 0; probe < 5; probe += 1) log.record(timedOut);
    log.record({ ...timedOut, ...pending });
    log.record(up);
    log.record(up);

    expect(lines).toEqual([
      'log Ready',
      'warn Not ready: database: timeout of 1000ms exceeded',
      'warn Not ready: database: timeout of 1000ms exceeded; migrations: 1 pending migration(s)',
      'log Ready again',
    ]);
  });

  it('names each failing check with its message', () => {
    new ReadinessLog().record({
      database: { status: 'down', message: 'connect ECONNREFUSED 127.0.0.1:5433' },
      shutdown: { status: 'down' },
    });
    expect(lines).toEqual(['warn Not ready: database: connect ECONNREFUSED 127.0.0.1:5433; shutdown: down']);
  });
});
