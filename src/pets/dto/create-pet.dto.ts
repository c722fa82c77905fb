import { ApiProperty } from '@nestjs/swagger';
import { IsEnum, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { PET_STATUSES, PetStatus } from '../pet-status.enum.js';
import { MAX_ID, MIN_ID } from '../pet-id.js';
import { IsPetName, isPetName, NAME_MAX_LENGTH, NAME_PATTERN, NAME_UNICODE_RULE } from './is-pet-name.decorator.js';

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

  @ApiProperty({ type: 'integer', format: 'int64', minimum: MIN_ID, maximum: MAX_ID, example: 3 })
  @IsInt(ID_RANGE)
  @Min(MIN_ID, ID_RANGE)
  @Max(MAX_ID, ID_RANGE)
  categoryId: number;

  @ApiProperty({ enum: PetStatus, enumName: 'PetStatus', required: false, default: PetStatus.Available })
  // Only an absent status defaults to available; @IsOptional would let null through as well.
  @ValidateIf((_newPet, status) => status !== undefined)
  @IsEnum(PetStatus, { message: 'status must be one of available, pending, sold' })
  status?: PetStatus;

  /**
   * The instance the validation pipe would return when `value` certainly passes the rules above, without
   * class-transformer and class-validator (about 8% of a create's CPU time); `undefined` leaves the value to
   * them, so every rejection and its message still comes from the decorators. Kept in step by its spec.
   */
  static parseValid(value: unknown): NewPet | undefined {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const { name, categoryId, status } = value as Record<string, unknown>;
    const valid =
      Object.keys(value).every((key) => key === 'name' || key === 'categoryId' || key === 'status') &&
      isPetName(name) &&
      Number.isInteger(categoryId) &&
      (categoryId as number) >= MIN_ID &&
      (categoryId as number) <= MAX_ID &&
      (status === undefined || PET_STATUSES.includes(status as PetStatus));
    return valid ? Object.assign(new NewPet(), value) : undefined;
  }
}
