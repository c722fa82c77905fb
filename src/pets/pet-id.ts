import { Injectable, PipeTransform } from '@nestjs/common';
import { validationFailed } from '../edge/errors/api-error.js';

// Ids are int64 in PostgreSQL but JSON numbers on the wire: up to 2^53-1 every value stays exact in JavaScript.
export const MIN_ID = 1;
export const MAX_ID = Number.MAX_SAFE_INTEGER;

const DECIMAL_ID = /^[1-9][0-9]{0,15}$/;

@Injectable()
export class PetIdPipe implements PipeTransform<unknown, number> {
  transform(value: unknown): number {
    const id = typeof value === 'string' && DECIMAL_ID.test(value) ? Number(value) : NaN;
    if (!(id <= MAX_ID)) throw validationFailed(`petId must be an integer from 1 to ${MAX_ID}.`);
    return id;
  }
}

export const ID_SCHEMA = { type: 'integer', format: 'int64', minimum: MIN_ID, maximum: MAX_ID } as const;
