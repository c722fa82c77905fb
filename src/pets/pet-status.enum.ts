import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { IsEnum } from 'class-validator';

export enum PetStatus {
  Available = 'available',
  Pending = 'pending',
  Sold = 'sold',
}

export const PET_STATUSES: readonly PetStatus[] = Object.values(PetStatus);

/** A `status` property: the one `PetStatus` schema of the document, and a message naming the accepted values. */
export const ApiPetStatus = (options: ApiPropertyOptions) =>
  ApiProperty({ enum: PetStatus, enumName: 'PetStatus', ...options });
export const IsPetStatus = () => IsEnum(PetStatus, { message: `status must be one of ${PET_STATUSES.join(', ')}` });
