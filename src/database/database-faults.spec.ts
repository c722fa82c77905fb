import { databaseFault } from './database-faults.js';

const errorWithCode = (code: string, message = 'boom') => Object.assign(new Error(message), { code });

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
