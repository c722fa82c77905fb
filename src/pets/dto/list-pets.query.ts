import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { CURSOR_LENGTH } from '../page-cursor.codec.js';
import { ApiPetStatus, IsPetStatus, PetStatus } from '../pet-status.enum.js';

const LIMIT_DEFAULT = 20;
export const LIMIT_MAX = 100;

const LIMIT_RANGE = { message: `limit must be an integer from 1 to ${LIMIT_MAX}` };

// Only a plain decimal becomes a number: `1e2`, ` 5`, `5.0`, '' and repeated values stay as sent and fail @IsInt.
const toDecimalInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^[0-9]{1,3}$/.test(value) ? Number(value) : value;

/** Query of `listPets`; unknown parameters are ignored. */
export class ListPetsQuery {
  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: LIMIT_MAX,
    default: LIMIT_DEFAULT,
    required: false,
  })
  @IsOptional()
  @Transform(toDecimalInteger)
  @IsInt(LIMIT_RANGE)
  @Min(1, LIMIT_RANGE)
  @Max(LIMIT_MAX, LIMIT_RANGE)
  limit: number = LIMIT_DEFAULT;

  @ApiPetStatus({ required: false })
  @IsOptional()
  @IsPetStatus()
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
}
