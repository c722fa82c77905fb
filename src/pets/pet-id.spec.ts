import { ApiError } from '../edge/errors/api-error.js';
import { MAX_ID, MIN_ID, PetIdPipe } from './pet-id.js';

const parseId = (value: unknown) => new PetIdPipe().transform(value);

describe('PetIdPipe', () => {
  it('bounds ids to 1..2^53-1', () => {
    expect(MIN_ID).toBe(1);
    expect(MAX_ID).toBe(9007199254740991);
  });

  it.each([
    ['1', 1],
    ['42', 42],
    ['9007199254740991', 9007199254740991],
  ])('accepts %j', (value, expected) => {
    expect(parseId(value)).toBe(expected);
  });

  it.each([
    ['0'],
    ['-1'],
    ['+1'],
    ['01'],
    ['1.5'],
    ['1.0'],
    ['1e2'],
    [' 5'],
    ['5 '],
    ['0x10'],
    ['abc'],
    [''],
    ['9007199254740992'],
    ['99999999999999999'],
    ['1'.repeat(100)],
  ])('rejects %j', (value) => {
    expect(() => parseId(value)).toThrow(ApiError);
  });

  it.each([[1], [undefined], [null], [['1']], [{}]])('rejects the non-string %j', (value) => {
    expect(() => parseId(value)).toThrow(ApiError);
  });
});
