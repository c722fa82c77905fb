import { ApiProperty } from '@nestjs/swagger';
import { PetStatus } from '../pet-status.enum.js';
import { MAX_ID, MIN_ID } from '../pet-id.js';
import { NAME_MAX_LENGTH } from './is-pet-name.decorator.js';

/** An animal as the API returns it. */
export class Pet {
  @ApiProperty({ type: 'integer', format: 'int64', minimum: MIN_ID, maximum: MAX_ID, example: 1 })
  id: number;

  @ApiProperty({ minLength: 1, maxLength: NAME_MAX_LENGTH, example: 'Rex' })
  name: string;

  @ApiProperty({ type: 'integer', format: 'int64', minimum: MIN_ID, maximum: MAX_ID, example: 3 })
  categoryId: number;

  @ApiProperty({ enum: PetStatus, enumName: 'PetStatus', example: PetStatus.Available })
  status: PetStatus;
}
