import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEnum, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { CURSOR_LENGTH } from '../page-cursor.codec.js';
import { PET_STATUSES, PetStatus } from '../pet-status.enum.js';

export const LIMIT_DEFAULT = 20;
export const LIMIT_MAX = 100;

const LIMIT_RANGE = { message: `limit must be an integer from 1 to ${LIMIT_MAX}` };

const DECIMAL_LIMIT = /^[0-9]{1,3}$/;

// Only a plain decimal becomes a number: `1e2`, ` 5`, `5.0`, '' and repeated values stay as sent and fail @IsInt.
const toDecimalInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && DECIMAL_LIMIT.test(value) ? Number(value) : value;

/** Query of `listPets`; unknown parameters are ignored. */
export class ListPetsQuery {
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, required: false })
  @IsOptional()
  @Transform(toDecimalInteger)
  @IsInt(LIMIT_RANGE)
  @Min(1, LIMIT_RANGE)
  @Max(LIMIT_MAX, LIMIT_RANGE)
  limit: number = LIMIT_DEFAULT;

  @ApiProperty({ enum: PetStatus, enumName: 'PetStatus', required: false })
  @IsOptional()
  @IsEnum(PetStatus, { message: 'status must be one of available, pending, sold' })
  status?: PetStatus;

  @ApiProperty({
    required: false,
    type: 'string',
    maxLength: CURSOR_LENGTH,
    description:
      'Opaque, url-safe position of the next page, taken from the `Link: rel="next"` header of the previous ' +
      'page; clients follow that link and never build or edit a cursor. A cursor is bound to the `status` ' +
      'filter it was issued for: a malformed or altered cursor, or one sent with a different `status`, is ' +
      'answered with 400 `invalid_cursor`.',
  })
  @IsOptional()
  // Checked here only for shape (a repeated parameter arrives as an array); the service decodes it.
  @IsString({ message: 'cursor must be given once' })
  cursor?: string;

  /**
   * The instance the validation pipe would return when `query` certainly passes the rules above, without
   * class-transformer and class-validator; `undefined` leaves the query to them, so every rejection and its
   * message still comes from the decorators. Unknown parameters are ignored, as there. Kept in step by its spec.
   */
  static parseValid(query: unknown): ListPetsQuery | undefined {
    if (query === null || typeof query !== 'object') return undefined;
    const { limit, status, cursor } = query as Record<string, unknown>;
    const parsed = new ListPetsQuery();
    if (limit !== undefined) {
      if (typeof limit !== 'string' || !DECIMAL_LIMIT.test(limit)) return undefined;
      parsed.limit = Number(limit);
      if (parsed.limit < 1 || parsed.limit > LIMIT_MAX) return undefined;
    }
    if (status !== undefined) {
      if (!PET_STATUSES.includes(status as PetStatus)) return undefined;
      parsed.status = status as PetStatus;
    }
    if (cursor !== undefined) {
      if (typeof cursor !== 'string') return undefined;
      parsed.cursor = cursor;
    }
    return parsed;
  }
}
