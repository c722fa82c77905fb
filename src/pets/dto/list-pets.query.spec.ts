import { ArgumentMetadata } from '@nestjs/common';
import { RequestValidationPipe, VALIDATED_QUERIES_MAX } from '../../edge/request-validation.pipe.js';
import { rejectionBody as rejection } from '../../../test/support/api-error-body.js';
import { ListPetsQuery } from './list-pets.query.js';

const query: ArgumentMetadata = { type: 'query', metatype: ListPetsQuery };

describe('ListPetsQuery through RequestValidationPipe', () => {
  const pipe = new RequestValidationPipe();

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

  it('leaves path parameters to their own pipes', () => {
    expect(pipe.transform('abc', { type: 'param', metatype: String, data: 'petId' })).toBe('abc');
  });
});
