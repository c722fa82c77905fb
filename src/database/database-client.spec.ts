import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { DatabaseClient } from './database-client.js';

describe('DatabaseClient', () => {
  it('survives an error event that arrives while nobody else listens (a session terminated between owners)', () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const client = new DatabaseClient({ connectionString: 'postgres://user@127.0.0.1:1/db' });
      expect(() =>
        client.emit('error', Object.assign(new Error('terminating connection'), { code: '57P01' })),
      ).not.toThrow();
      expect(warned).toHaveBeenCalledWith('Database connection lost: terminating connection');
    } finally {
      warned.mockRestore();
    }
  });
});
