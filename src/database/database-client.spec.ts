import { DatabaseClient } from './database-client.js';

describe('DatabaseClient', () => {
  it('survives an error event that arrives while nobody else listens (a session terminated between owners)', () => {
    const client = new DatabaseClient({ connectionString: 'postgres://user@127.0.0.1:1/db' });
    expect(() => client.emit('error', Object.assign(new Error('terminating connection'), { code: '57P01' }))).not.toThrow();
  });
});
