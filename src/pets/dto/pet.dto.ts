import { ApiProperty } from '@nestjs/swagger';
import { ApiPetStatus, PetStatus } from '../pet-status.enum.js';
import { ID_SCHEMA } from '../pet-id.js';
import { NAME_MAX_LENGTH } from './is-pet-name.decorator.js';

export class Pet {
  @ApiProperty({ ...ID_SCHEMA, example: 1 })
  id: number;

  @ApiProperty({ minLength: 1, maxLength: NAME_MAX_LENGTH, example: 'Rex' })
  name: string;

  @ApiProperty({ ...ID_SCHEMA, example: 3 })
  categoryId: number;

  @ApiPetStatus({ example: PetStatus.Available })
  status: PetStatus;
}
