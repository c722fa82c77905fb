import { ValidationPipe } from '@nestjs/common';
import { NewPet } from './create-pet.dto.js';
import { ListPetsQuery } from './list-pets.query.js';

/** What the decorators decide, through Nest's ValidationPipe with the options of RequestValidationPipe. */
async function decoratorsOutcome(pipe: ValidationPipe, metatype: unknown, value: unknown) {
  try {
    const result: unknown = await pipe.transform(structuredClone(value), { type: 'body', metatype: metatype as never });
    return { ok: true, result };
  } catch {
    return { ok: false, result: undefined };
  }
}

type ParsesValid = { parseValid(value: unknown): object | undefined };

async function expectInStep(pipe: ValidationPipe, metatype: ParsesValid, value: unknown) {
  const fast = metatype.parseValid(structuredClone(value));
  const slow = await decoratorsOutcome(pipe, metatype, value);
  if (fast === undefined) return;
  // Whatever parseValid accepts, the decorators accept, into the same instance (same own keys, in order).
  expect(slow.ok).toBe(true);
  expect(Object.getPrototypeOf(fast)).toBe(Object.getPrototypeOf(slow.result));
  expect(Object.entries(fast)).toEqual(Object.entries(slow.result as object));
}

describe('NewPet.parseValid', () => {
  const pipe = new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: true });

  it.each([
    [{ name: 'Rex', categoryId: 3 }],
    [{ name: ' Rex ', categoryId: 3, status: 'sold' }],
    [{ status: 'pending', categoryId: Number.MAX_SAFE_INTEGER, name: '🐶'.repeat(255) }],
  ])('builds the instance the decorators would for %j', async (value) => {
    expect(NewPet.parseValid(value)).toBeInstanceOf(NewPet);
    await expectInStep(pipe, NewPet, value);
  });

  it.each([
    [{}],
    [{ name: 'Rex' }],
    [{ name: 'Rex', categoryId: 3, id: 7 }],
    [{ name: 'Rex', categoryId: 0 }],
    [{ name: 'Rex', categoryId: 3.5 }],
    [{ name: 'Rex', categoryId: '3' }],
    [{ name: 'Rex', categoryId: Number.MAX_SAFE_INTEGER + 1 }],
    [{ name: 'Rex', categoryId: 3, status: null }],
    [{ name: 'Rex', categoryId: 3, status: 'lost' }],
    [{ name: '   ', categoryId: 3 }],
    [{ name: 'x'.repeat(256), categoryId: 3 }],
    [{ name: 42, categoryId: 3 }],
    [null],
    [[{ name: 'Rex', categoryId: 3 }]],
    ['Rex'],
  ])('leaves %j to the decorators', async (value) => {
    expect(NewPet.parseValid(value)).toBeUndefined();
    expect((await decoratorsOutcome(pipe, NewPet, value)).ok).toBe(false);
  });
});

describe('ListPetsQuery.parseValid', () => {
  const pipe = new ValidationPipe({ transform: true, whitelist: true, forbidNonWhitelisted: false });

  it.each([
    [{}],
    [{ limit: '20' }],
    [{ limit: '100', status: 'available' }],
    [{ limit: '020', status: 'sold', cursor: 'abc' }],
    [{ cursor: '' }],
    [{ limit: '1', other: 'ignored', status: 'pending' }],
  ])('builds the instance the decorators would for %j', async (value) => {
    expect(ListPetsQuery.parseValid(value)).toBeInstanceOf(ListPetsQuery);
    await expectInStep(pipe, ListPetsQuery, value);
  });

  it.each([
    [{ limit: '0' }],
    [{ limit: '101' }],
    [{ limit: '1e2' }],
    [{ limit: ' 5' }],
    [{ limit: '' }],
    [{ limit: ['5', '6'] }],
    [{ status: 'lost' }],
    [{ status: ['sold', 'sold'] }],
    [{ cursor: ['a', 'b'] }],
  ])('leaves %j to the decorators', async (value) => {
    expect(ListPetsQuery.parseValid(value)).toBeUndefined();
    expect((await decoratorsOutcome(pipe, ListPetsQuery, value)).ok).toBe(false);
  });
});
