import { ApiError, type ErrorBody } from '../../src/edge/errors/api-error.js';

/** The body of the ApiError that `work` throws or rejects with; fails the test when it throws nothing or another error. */
export async function rejectionBody(work: () => unknown): Promise<ErrorBody> {
  try {
    await work();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return (error as ApiError).toBody();
  }
  throw new Error('expected a rejection');
}
