import { Injectable, PipeTransform } from '@nestjs/common';
import { ApiError } from '../edge/errors/api-error.js';
import { ErrorCode } from '../edge/errors/error-code.js';
import { MAX_ID, parseId } from './pet-id.js';

@Injectable()
export class PetIdPipe implements PipeTransform<unknown, number> {
  transform(value: unknown): number {
    const id = parseId(value);
    if (id === undefined) {
      throw new ApiError(400, ErrorCode.ValidationFailed, `petId must be an integer from 1 to ${MAX_ID}.`);
    }
    return id;
  }
}
