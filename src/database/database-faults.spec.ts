import { databaseFault, FAULT_CLASSES, POOL_FULL_CLASS } from './database-faults.js';

const errorWithCode = (code: string, message = 'boom') => Object.assign(new Error(message), { code });

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
    expect([...FAULT_CLASSES].sort()).toEqual(['08', '25', '40', '53', '55', '57', POOL_FULL_CLASS]);
    const answered503 = ['08006', '25006', '40001', '53100', '55P03', '57014'].map(
      (code) => databaseFault({ code })!.sqlClass,
    );
    expect(answered503.every((sqlClass) => FAULT_CLASSES.includes(sqlClass))).toBe(true);
    // A lock wait is a fault like any other; the idempotent create answers its own (409) before it gets here.
    expect(databaseFault({ code: '55P03' })).toMatchObject({ sqlClass: '55', answer: 'unavailable' });
  });
});

describe('databaseFault', () => {
  it.each([
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection due to crash of another server process'],
    ['57P03', 'the database system is not yet accepting connections'],
  ])(
    'counts SQLSTATE %s (server shutting down or not accepting connections) as a fault of the database',
    (code, message) => {
      expect(databaseFault(errorWithCode(code, message))).toEqual({
        code,
        sqlClass: '57',
        kind: 'server shutting down or not accepting connections',
        message,
        answer: 'unavailable',
      });
    },
  );

  it.each([['EAI_AGAIN'], ['ENETUNREACH'], ['EADDRNOTAVAIL'], ['ECONNABORTED']])(
    'counts a network error (%s) as a connection failure (class 08)',
    (code) => {
      expect(databaseFault(errorWithCode(code, `connect ${code} db:5432`))).toMatchObject({
        code,
        sqlClass: '08',
        kind: 'connection failure',
        answer: 'unavailable',
      });
    },
  );
});
