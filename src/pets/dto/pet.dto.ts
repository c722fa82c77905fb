import { ApiProperty } from '@nestjs/swagger';
import { PetStatus } from '../pet-status.enum.js';
import { MAX_ID, MIN_ID } from '../pet-id.js';

/** An animal as the API returns it. */
export class Pet {
  @ApiProperty({ type: 'integer', format: 'int64', minimum: MIN_ID, maximum: MAX_ID, example: 1 })
  id: number;

  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Rex' })
  name: string;

  @ApiProperty({ type: 'integer', format: 'int64', minimum: MIN_ID, maximum: MAX_ID, example: 3 })
  categoryId: number;

  @ApiProperty({ enum: PetStatus, enumName: 'PetStatus', required: false, example: PetStatus.Available })
  status: PetStatus;
}
