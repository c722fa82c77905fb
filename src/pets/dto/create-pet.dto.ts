import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min, ValidateIf } from 'class-validator';
import { ApiPetStatus, IsPetStatus, PetStatus } from '../pet-status.enum.js';
import { ID_SCHEMA, MAX_ID, MIN_ID } from '../pet-id.js';
import { IsPetName, NAME_MAX_LENGTH, NAME_PATTERN, NAME_UNICODE_RULE } from './is-pet-name.decorator.js';

const ID_RANGE = { message: `categoryId must be an integer from ${MIN_ID} to ${MAX_ID}` };

/** The body of `createPet`; unknown properties (including `id`) are rejected. */
export class NewPet {
  @ApiProperty({
    minLength: 1,
    maxLength: NAME_MAX_LENGTH,
    pattern: NAME_PATTERN,
    example: 'Rex',
    description:
      `1 to ${NAME_MAX_LENGTH} characters (code points), stored exactly as sent. The pattern (the same in every ` +
      `regex engine, with or without the \`u\` flag) refuses control characters (U+0000-U+001F, U+007F-U+009F) ` +
      `and names of spaces only. ${NAME_UNICODE_RULE.description}`,
  })
  @IsPetName()
  name: string;

  @ApiProperty({ ...ID_SCHEMA, example: 3 })
  @IsInt(ID_RANGE)
  @Min(MIN_ID, ID_RANGE)
  @Max(MAX_ID, ID_RANGE)
  categoryId: number;

  @ApiPetStatus({ required: false, default: PetStatus.Available })
  // Only an absent status defaults to available; @IsOptional would let null through as well.
  @ValidateIf((_newPet, status) => status !== undefined)
  @IsPetStatus()
  status?: PetStatus;
}
