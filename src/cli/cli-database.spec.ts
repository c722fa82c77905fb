import { oneLine } from './cli-database.js';

describe('oneLine', () => {
  it('describes an AggregateError with an empty message by its errors (never "undefined")', () => {
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    const error = new AggregateError([refused('::1:5433'), refused('127.0.0.1:5433')]);
    expect(oneLine(error)).toBe('connect ECONNREFUSED ::1:5433; connect ECONNREFUSED 127.0.0.1:5433');
  });

  it.each([
    [undefined, 'an unknown error'],
    ['', 'an unknown error'],
    [Object.assign(new Error(''), { code: 'ECONNRESET' }), 'ECONNRESET'],
    [new Error('first line\n    at stack'), 'first line'],
  ])('describes %p as %j', (thrown, expected) => {
    expect(oneLine(thrown)).toBe(expected);
  });
});
