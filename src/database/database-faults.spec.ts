import { databaseFault, FAULT_CLASSES, POOL_FULL_CLASS } from './database-faults.js';

describe('databaseFault classes', () => {
  it('counts a full local pool apart from an unreachable server', () => {
    expect(databaseFault(new Error('timeout exceeded when trying to connect'))).toMatchObject({
      sqlClass: POOL_FULL_CLASS,
      answer: 'unavailable',
    });
    expect(databaseFault(new Error('Connection terminated due to connection timeout'))).toMatchObject({
      sqlClass: '08',
      answer: 'unavailable',
    });
    expect(databaseFault(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toMatchObject({
      sqlClass: '08',
    });
  });

  it('lists every class a fault answered 503 is counted under, and only those', () => {
    expect([...FAULT_CLASSES].sort()).toEqual(['08', '25', '40', '53', '57', POOL_FULL_CLASS]);
    const answered503 = ['08006', '25006', '40001', '53100', '57014'].map((code) => databaseFault({ code })!.sqlClass);
    expect(answered503.every((sqlClass) => FAULT_CLASSES.includes(sqlClass))).toBe(true);
    // A lock wait is answered 409, never counted as a fault.
    expect(databaseFault({ code: '55P03' })).toMatchObject({ answer: 'lock-wait' });
    expect(FAULT_CLASSES).not.toContain('55');
  });
});
