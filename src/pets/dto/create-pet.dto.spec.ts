import { ArgumentMetadata } from '@nestjs/common';
import { RequestValidationPipe } from '../../edge/request-validation.pipe.js';
import { rejectionBody as rejection } from '../../../test/support/api-error-body.js';
import { NewPet } from './create-pet.dto.js';

const body: ArgumentMetadata = { type: 'body', metatype: NewPet };

describe('NewPet through RequestValidationPipe', () => {
  const pipe = new RequestValidationPipe();

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
    await expect(rejection(() => pipe.transform({ name: 'Rex', categoryId: 1, status }, body))).resolves.toMatchObject({
      message: 'status must be one of available, pending, sold.',
    });
  });
});
