import { ArgumentMetadata } from '@nestjs/common';
import { NewPet } from './create-pet.dto.js';
import { ListPetsQuery } from './list-pets.query.js';
import { ApiError } from '../../edge/errors/api-error.js';
import { RequestValidationPipe, VALIDATED_QUERIES_MAX } from '../../edge/request-validation.pipe.js';

const body: ArgumentMetadata = { type: 'body', metatype: NewPet };
const query: ArgumentMetadata = { type: 'query', metatype: ListPetsQuery };

async function rejection(work: () => unknown): Promise<ReturnType<ApiError['toBody']>> {
  try {
    await work();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return (error as ApiError).toBody();
  }
  throw new Error('expected a rejection');
}

describe('RequestValidationPipe', () => {
  const pipe = new RequestValidationPipe();

  describe('bodies', () => {
    it('returns a NewPet instance holding exactly the values sent', async () => {
      const result = await pipe.transform({ name: ' Rex ', categoryId: 3, status: 'sold' }, body);

      expect(result).toBeInstanceOf(NewPet);
      expect(result).toEqual({ name: ' Rex ', categoryId: 3, status: 'sold' });
    });

    it('rejects unknown properties, including id', async () => {
      await expect(rejection(() => pipe.transform({ name: 'Rex', categoryId: 3, id: 7 }, body))).resolves.toEqual({
        code: 'validation_failed',
        message: 'property id should not exist.',
        status: 400,
      });
    });

    it.each([[null], ['Rex'], [42], [true], [[{ name: 'Rex', categoryId: 3 }]]])(
      'rejects the non-object body %j',
      async (value) => {
        await expect(rejection(() => pipe.transform(value, body))).resolves.toEqual({
          code: 'validation_failed',
          message: 'The request body must be a JSON object.',
          status: 400,
        });
      },
    );

    it('treats a missing body as an empty object, so each required field is reported', async () => {
      const error = await rejection(() => pipe.transform(undefined, body));

      expect(error.code).toBe('validation_failed');
      expect(error.message).toBe(
        'name must be a string of 1 to 255 characters, not only whitespace, without control characters; ' +
          'categoryId must be an integer from 1 to 9007199254740991.',
      );
    });

    it.each([['5'], [1.5], [true], [null], [0], [9007199254740992], [-1]])(
      'rejects categoryId %j without converting it',
      async (categoryId) => {
        await expect(rejection(() => pipe.transform({ name: 'Rex', categoryId }, body))).resolves.toEqual({
          code: 'validation_failed',
          message: 'categoryId must be an integer from 1 to 9007199254740991.',
          status: 400,
        });
      },
    );

    it.each([['lost'], [null]])('rejects the status %j (only an absent status defaults)', async (status) => {
      await expect(
        rejection(() => pipe.transform({ name: 'Rex', categoryId: 1, status }, body)),
      ).resolves.toMatchObject({ message: 'status must be one of available, pending, sold.' });
    });
  });

  describe('queries', () => {
    it('defaults limit to 20 and ignores unknown parameters', async () => {
      const result = await pipe.transform({ page: '2' }, query);

      expect(result).toBeInstanceOf(ListPetsQuery);
      expect(result).toEqual({ limit: 20 });
    });

    it('turns a plain decimal limit into a number and keeps the status', async () => {
      await expect(pipe.transform({ limit: '100', status: 'pending' }, query)).resolves.toEqual({
        limit: 100,
        status: 'pending',
      });
    });

    it.each([['1e2'], [' 5'], ['5.0'], [''], [['5', '6']], ['0'], ['101'], ['-1'], ['0x10']])(
      'rejects limit %j',
      async (limit) => {
        await expect(rejection(() => pipe.transform({ limit }, query))).resolves.toEqual({
          code: 'validation_failed',
          message: 'limit must be an integer from 1 to 100.',
          status: 400,
        });
      },
    );

    it('answers the same parameters again with the same frozen instance, without validating them again', async () => {
      const own = new RequestValidationPipe();
      const first = await own.transform({ limit: '50', status: 'sold' }, query);
      const again = own.transform({ limit: '50', status: 'sold' }, query);

      expect(again).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
      expect(first).toEqual({ limit: 50, status: 'sold' });
      await expect(own.transform({ limit: '50', status: 'pending' }, query)).resolves.toEqual({
        limit: 50,
        status: 'pending',
      });
    });

    it('keeps at most VALIDATED_QUERIES_MAX queries, dropping the one kept longest ago', async () => {
      const own = new RequestValidationPipe();
      const oldest = await own.transform({ limit: '1', page: '0' }, query);
      for (let page = 1; page < VALIDATED_QUERIES_MAX; page++)
        await own.transform({ limit: '1', page: `${page}` }, query);
      expect(own.transform({ limit: '1', page: '0' }, query)).toBe(oldest);

      await own.transform({ limit: '1', page: 'one more' }, query);
      const again = await own.transform({ limit: '1', page: '0' }, query);
      expect(again).not.toBe(oldest);
      expect(again).toEqual({ limit: 1 });
    });

    it('validates a refused query again every time', async () => {
      const own = new RequestValidationPipe();
      for (let i = 0; i < 2; i++) {
        await expect(rejection(() => own.transform({ limit: '0' }, query))).resolves.toMatchObject({
          message: 'limit must be an integer from 1 to 100.',
        });
      }
    });
  });

  it('leaves path parameters to their own pipes', () => {
    expect(pipe.transform('abc', { type: 'param', metatype: String, data: 'petId' })).toBe('abc');
  });
});
