import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import pg from 'pg';
import { dataSourceOptions } from './data-source-options.js';

describe('dataSourceOptions', () => {
  it('makes each pooled connection survive an error event that arrives while nobody else listens', () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const client = new pg.Client({ connectionString: 'postgres://user@127.0.0.1:1/db' });
      const { onConnect } = dataSourceOptions('postgres://user@127.0.0.1:1/db').extra as pg.PoolConfig;
      onConnect!(client);
      expect(() =>
        client.emit('error', Object.assign(new Error('terminating connection'), { code: '57P01' })),
      ).not.toThrow();
      expect(warned).toHaveBeenCalledWith('Database connection lost: terminating connection');
    } finally {
      warned.mockRestore();
    }
  });
});
