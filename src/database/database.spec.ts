import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { DatabaseFaultLog } from './database-fault-log.js';
import type { DatabaseFault } from './database-faults.js';
import { Database } from './database.js';
import type { ReadReplicas } from './read-replicas.js';

const fault = (code: string) => Object.assign(new Error(`fault ${code}`), { code });

/** A Database on a DataSource whose statements fail with `errors`, in turn, then answer. */
function databaseFailing(...errors: Error[]) {
  const recorded: DatabaseFault[] = [];
  const answer = () => (errors.length > 0 ? Promise.reject(errors.shift()!) : Promise.resolve('answered'));
  const dataSource = {
    driver: { master: new EventEmitter() },
    createQueryRunner: () => ({ query: answer, release: () => Promise.resolve() }),
    transaction: (work: (manager: unknown) => Promise<unknown>) => answer().then(() => work({})),
  } as unknown as DataSource;
  const faults = { record: (fault: DatabaseFault) => recorded.push(fault) } as unknown as DatabaseFaultLog;
  const replicas = { configured: false } as ReadReplicas;
  return {
    database: new Database({ preparedStatements: false }, dataSource, replicas, faults, new Registry()),
    recorded,
  };
}

describe('Database records a fault where it happens, once its retries are spent', () => {
  it('records the fault it throws, whoever asked', async () => {
    const { database, recorded } = databaseFailing(fault('ECONNREFUSED'));
    await expect(database.query('SELECT 1')).rejects.toThrow('fault ECONNREFUSED');
    expect(recorded).toEqual([expect.objectContaining({ code: 'ECONNREFUSED', sqlClass: '08' })]);
  });

  it('records nothing for a conflict its retry got past, and the conflict that outlived it once', async () => {
    const retried = databaseFailing(fault('40001'));
    await expect(retried.database.transaction(() => Promise.resolve('done'))).resolves.toBe('done');
    expect(retried.recorded).toEqual([]);
    const twice = databaseFailing(fault('40P01'), fault('40P01'));
    await expect(twice.database.transaction(() => Promise.resolve('done'))).rejects.toThrow('fault 40P01');
    expect(twice.recorded).toEqual([expect.objectContaining({ code: '40P01', sqlClass: '40' })]);
  });

  it('leaves unrecorded a fault its caller answers itself, and an error that is no fault (a bug)', async () => {
    const answered = databaseFailing(fault('55P03'));
    const work = answered.database.transaction(() => Promise.resolve('done'), ['55P03']);
    await expect(work).rejects.toThrow('fault 55P03');
    const bug = databaseFailing(new TypeError('rows is undefined'));
    await expect(bug.database.query('SELECT 1')).rejects.toThrow('rows is undefined');
    expect([...answered.recorded, ...bug.recorded]).toEqual([]);
  });
});

describe('Database sending a named statement', () => {
  it('says what to set when the connection has lost it, as PgBouncer before 1.21 in transaction pooling does', async () => {
    const lost = Object.assign(new Error('prepared statement "pets-by-id" already exists'), { code: '42P05' });
    const client = { query: () => Promise.reject(lost) };
    const dataSource = {
      driver: { master: new EventEmitter() },
      createQueryRunner: () => ({ connect: () => Promise.resolve(client), release: () => Promise.resolve() }),
    } as unknown as DataSource;
    const faults = { record: () => undefined } as unknown as DatabaseFaultLog;
    const database = new Database(
      { preparedStatements: true },
      dataSource,
      { configured: false } as ReadReplicas,
      faults,
      new Registry(),
    );
    await expect(database.query({ name: 'pets-by-id', text: 'SELECT 1' })).rejects.toThrow(
      /already exists: .* set DATABASE_PREPARED_STATEMENTS=false/,
    );
  });
});
